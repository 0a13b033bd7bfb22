"""The embedded default: `python run_pretraining.py` without --input_file and --output_dir.

It fetches the public Wikipedia sample, holds out every tenth article, builds
TFRecords with our generator, pretrains the tiny config on CPU (32-token sequences
first, then 64-token, then full-length ones: short sequences first, as the paper
does), evaluates on the held-out
articles next to the majority baselines, and fills in a `[MASK]` in a few held-out
sentences. Last, it exports the model as a TF-Hub-style
preprocessing + encoder SavedModel pair under `output_dir/export/`, loads it with
`tf.saved_model.load` and fills in a `[MASK]` through the export, all under
`output/pretraining_demo` of the working directory, beside a copy of the vocab. A
second run resumes the first's checkpoints, and says so. Any other flag given on the
command line overrides the demo's setting of the same name.

With `--demo_language=zh` it does the same in Chinese, under `output/pretraining_demo_zh`:
Chinese news articles, bert-base-chinese's vocab, records with whole-word masking of
rjieba's words, and whole masked words to fill in, queried through the export as raw text.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib.resources
import os
import pathlib
import time
from typing import Callable, Collection

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import load_checkpoint
from bert_tf.corpora import (
    fetch_chinese_news,
    fetch_chinese_vocab,
    fetch_uncased_vocab,
    fetch_wikipedia_sample,
)
from bert_tf.data.pretraining_data_generator import PretrainingDataOptions, create_pretraining_data
from bert_tf.data.pretraining_dataset import pretraining_dataset
from bert_tf.data.word_segmentation import segmenter
from bert_tf.errors import UserInputError
from bert_tf.export import export_hub_pair
from bert_tf.pretraining import fill_mask
from bert_tf.pretraining.driver import PretrainingOptions, build_model, run_pretraining
from bert_tf.tokenization import Vocab
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

HELD_OUT_EVERY = 10  # every tenth article is held out for evaluation
# Each article is cut into pairs this many times, with fresh target lengths, masks and random
# next sentences. For the 10 held-out articles this also evens out the one-in-ten short target
# length, which turns a whole article into random-next pairs.
DUPE_FACTOR = 5
DEMO_SETTINGS = dict(
    bert_config_file=str(
        importlib.resources.files("bert_tf") / "configs" / "tiny" / "bert_config.json"
    ),
    output_dir="output/pretraining_demo",
    max_seq_length=128,
    max_predictions_per_seq=20,
    train_batch_size=32,
    eval_batch_size=32,
    # The learning rate that the tiny model learns most from in the demo's budget.
    # Each phase's steps (SHORT_SEQ_LENGTHS, below).
    learning_rate=2e-3,
    num_train_steps=800,
    num_warmup_steps=120,
    # Training scores each prediction against the batch's labels and 4,096 random vocab ids, not the
    # whole vocab (bert_tf.models.sampled_masked_lm): a much shorter step for about the same
    # held-out masked LM (docs/design-notes.md). --masked_lm_samples=0 scores the whole vocab.
    masked_lm_samples=4096,
    save_checkpoints_steps=400,
    iterations_per_loop=100,
    max_eval_steps=1000,
    # The compiled step, as on TPU; on a small CPU it is also faster than the plain graph
    # for the tiny config. --nojit_compile overrides.
    jit_compile=True,
)

# The paper pretrains on 128-token sequences first, then on 512-token ones. The demo trains a phase
# on sequences of each of these lengths that is at most half --max_seq_length, then one at
# --max_seq_length, each --num_train_steps long, with as many tokens per batch, from the weights of
# the phase before. At the start a [MASK]'s attention averages the whole sequence, so its neighbours
# weigh 1/32 of it at 32 tokens against 1/128: the tiny model learns to read them there, where at
# 128 tokens alone it stays on the unigram plateau (docs/design-notes.md, "Short sequences first").
SHORT_SEQ_LENGTHS = (32, 64)


@dataclasses.dataclass(frozen=True)
class DemoLanguage:
    """What the demo fetches and how it masks, per --demo_language."""

    description: str
    fetch_corpus: Callable[[], pathlib.Path]
    fetch_vocab: Callable[[], pathlib.Path]
    output_dir: str
    word_segmenter: str = "none"  # with one, whole-word masking of its words
    max_articles: int | None = (
        None  # the corpus's first articles only (about the English sample's 3 MB)
    )


LANGUAGES = {
    "en": DemoLanguage(
        "the Wikipedia sample and the uncased vocab",
        fetch_wikipedia_sample,
        fetch_uncased_vocab,
        "output/pretraining_demo",
    ),
    "zh": DemoLanguage(
        "Chinese news and bert-base-chinese's vocab",
        fetch_chinese_news,
        fetch_chinese_vocab,
        "output/pretraining_demo_zh",
        word_segmenter="rjieba",
        max_articles=1000,
    ),
}

# What the demo's job is, which no flag changes: it
# trains, then evaluates, on the TFRecords it writes.
DEMO_JOB = dict(do_train=True, do_eval=True, dynamic_masking=False)


def split_corpus(
    corpus: pathlib.Path, out_dir: pathlib.Path, max_articles: int | None = None
) -> tuple[pathlib.Path, pathlib.Path]:
    """Writes the training and held-out articles (every tenth; of the first `max_articles`) as two
    corpus files."""
    documents = corpus.read_text(encoding="utf-8").strip().split("\n\n")[:max_articles]
    parts = {"train": [], "heldout": []}
    for i, document in enumerate(documents):
        parts["heldout" if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "train"].append(document)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, docs in parts.items():
        path = out_dir / f"{name}.txt"
        io_utils.atomic_write_text(path, "\n\n".join(docs) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def evaluated_batches(options: PretrainingOptions) -> tf.data.Dataset:
    """The batches the held-out evaluation scores: `eval_file` in order, `eval_batch_size` each
    (the remainder dropped), at most `max_eval_steps` of them."""
    return pretraining_dataset(
        [options.eval_file],
        options.eval_batch_size,
        options.max_seq_length,
        options.max_predictions_per_seq,
        is_training=False,
        next_sentence_prediction=options.next_sentence_prediction,
    ).take(options.max_eval_steps)


def majority_baselines(batches: tf.data.Dataset) -> dict:
    """Accuracy of always predicting the most frequent masked token of `batches`, and their
    majority NSP label (where they have labels)."""
    counts, nsp = collections.Counter(), []
    for features in batches.as_numpy_iterator():
        real = features["masked_lm_weights"] > 0
        counts.update(features["masked_lm_ids"][real].tolist())
        nsp.extend(features.get("next_sentence_labels", []).tolist())
    token, count = counts.most_common(1)[0]
    baselines = {"masked_lm_accuracy": count / sum(counts.values()), "masked_lm_token": token}
    if nsp:
        baselines["next_sentence_accuracy"] = max(np.mean(nsp), 1 - np.mean(nsp))
    return baselines


def accuracy_at_mask_inputs(model, batches: tf.data.Dataset, mask_id: int) -> dict:
    """The masked LM's accuracy on the predictions of `batches` whose input token is `[MASK]`,
    next to always predicting their most frequent token. Of the other predictions, half show the
    token itself, which a model can copy, and half a random token."""

    @tf.function
    def predict(features):
        logits = model(features, training=False)["masked_lm_logits"]  # [batch, preds, vocab]
        return tf.argmax(logits, axis=-1, output_type=tf.int32)

    right, counts = 0, collections.Counter()
    for features in batches:
        # [batch, preds]
        inputs = tf.gather(features["input_ids"], features["masked_lm_positions"], batch_dims=1)
        at_mask = ((features["masked_lm_weights"] > 0) & (inputs == mask_id)).numpy()
        labels = features["masked_lm_ids"].numpy()[at_mask]
        right += int((predict(features).numpy()[at_mask] == labels).sum())
        counts.update(labels.tolist())
    total = sum(counts.values())
    return {
        "masked_lm_accuracy": right / total,
        "majority_accuracy": counts.most_common(1)[0][1] / total,
    }


def demo_options(
    options: PretrainingOptions, given: Collection[str], language: str = "en"
) -> PretrainingOptions:
    """The demo's settings on top of `options`, but for those named in `given`, which win.

    Args:
        options: the run's options, as the user gave them.
        given: the names of the options the user set explicitly. Setting one of `DEMO_JOB`'s
            to another value is a `UserInputError`.
        language: a key of `LANGUAGES`.

    Returns:
        The demo's options.
    """
    for name, value in DEMO_JOB.items():
        if name in given and getattr(options, name) != value:
            raise UserInputError(
                f"`{name}`={getattr(options, name)}: the demo always trains, then "
                "evaluates, on TFRecords it writes; give `input_file` and "
                "`output_dir` for another job"
            )
    settings = {name: value for name, value in DEMO_SETTINGS.items() if name not in given}
    settings["output_dir"] = LANGUAGES[language].output_dir
    return dataclasses.replace(options, **settings, **DEMO_JOB)


def run_demo(
    options: PretrainingOptions,
    strategy: tf.distribute.Strategy,
    language: str = "en",
    vocab_file: str | None = None,
) -> dict:
    """Runs the demo (see the module's docstring), printing each step.

    Args:
        options: the demo's options (`demo_options`).
        strategy: the strategy to pretrain under.
        language: a key of `LANGUAGES`.
        vocab_file: a vocab of the user's in place of the language's, or None.

    Returns:
        The held-out evaluation's results (`run_pretraining`'s).
    """
    started = time.perf_counter()
    options, shorts, vocab_file, heldout_text = prepare_data(
        options, vocab_file, LANGUAGES[language]
    )

    name = pathlib.Path(options.bert_config_file).parent.name
    lengths = [phase.max_seq_length for phase in (*shorts, options)]
    on = (
        f"on each of {', '.join(map(str, lengths[:-1]))} and {lengths[-1]}-token sequences in turn"
        if shorts
        else f"on {lengths[-1]}-token sequences"
    )
    print(
        f"3/5 Pretraining {name} BERT for {options.num_train_steps} steps {on}, then evaluating on "
        "held-out articles..."
    )
    if shorts:
        _train_short_phases(shorts, options, strategy)
        options = dataclasses.replace(options, init_checkpoint=shorts[-1].output_dir)
        print(_phase_line(options, len(shorts) + 1, len(shorts) + 1))
    if note := resume_note(options):
        print(note)
    results = run_pretraining(options, strategy)

    heldout_batches = evaluated_batches(options)
    baseline = majority_baselines(heldout_batches)
    model = _restore_model(options)
    tokenizer = BertTokenizer(vocab_file, options.do_lower_case)
    at_mask = accuracy_at_mask_inputs(model, heldout_batches, tokenizer.vocab.mask_id)
    print("\nHeld-out accuracy (articles never trained on):")
    print(
        f"  masked LM          {results['masked_lm_accuracy']:.3f}   (always predicting the most "
        f"frequent token: {baseline['masked_lm_accuracy']:.3f})"
    )
    print(
        f"   at [MASK] inputs  {at_mask['masked_lm_accuracy']:.3f}   (always predicting their "
        f"most frequent token: {at_mask['majority_accuracy']:.3f})"
    )
    if options.next_sentence_prediction:
        print(
            f"  next sentence      {results['next_sentence_accuracy']:.3f}   (always predicting "
            f"the majority label: {baseline['next_sentence_accuracy']:.3f})"
        )
        print(
            f"  next sentence AUC  {results['next_sentence_auc']:.3f}   (ranking the pairs at "
            "random, or by a constant prediction: 0.500)"
        )

    export_dir = pathlib.Path(options.output_dir) / "export"
    if LANGUAGES[language].word_segmenter == "none":
        print("\n4/5 Filling in a [MASK] in held-out sentences:")
        _show_fill_mask(model, tokenizer, heldout_text, options.max_seq_length)
        print(
            "\n5/5 Exporting the preprocessing + encoder "
            f"SavedModels to {export_dir} and querying them:"
        )
        _export_and_query(model, tokenizer, heldout_text, export_dir, options.max_seq_length)
    else:
        print("\n4/5 Filling in masked whole words in held-out sentences:")
        masked = _masked_chinese_words(
            tokenizer, heldout_text, LANGUAGES[language].word_segmenter, options.max_seq_length
        )
        for text, word in masked[:5]:
            _show_filled_word(model, tokenizer, text, word)
        print(
            f"\n5/5 Exporting the preprocessing + encoder SavedModels to {export_dir} and "
            "querying them with raw Chinese text:"
        )
        _export_and_query_text(model, tokenizer, *masked[5], export_dir, options.max_seq_length)
    print(
        f"\nDone in {time.perf_counter() - started:.0f} s. Checkpoints, bert_config.json, "
        f"vocab.txt, TensorBoard logs and eval_results.txt are in {options.output_dir}"
    )
    return results


def _train_short_phases(
    shorts: list[PretrainingOptions], options: PretrainingOptions, strategy
) -> None:
    """Trains the phases before the last, `options`, in turn, skipping each one that is done or
    followed by a phase that has begun."""
    phases = [*shorts, options]
    for i, phase in enumerate(shorts):
        later_begun = any(trained_steps(later.output_dir) is not None for later in phases[i + 1 :])
        if later_begun or (trained_steps(phase.output_dir) or 0) >= phase.num_train_steps:
            continue
        print(_phase_line(phase, i + 1, len(phases)))
        if note := resume_note(phase):  # this phase was cut short
            print(note)
        run_pretraining(phase, strategy)


def _phase_line(phase: PretrainingOptions, number: int, count: int) -> str:
    return (
        f"   Phase {number} of {count}: {phase.max_seq_length}-token "
        f"sequences, batch {phase.train_batch_size}, "
        f"{phase.max_predictions_per_seq} predictions each, in {phase.output_dir}"
    )


def trained_steps(output_dir: str) -> int | None:
    """The step of the newest checkpoint in `output_dir`; None without one."""
    latest = tf.train.latest_checkpoint(output_dir)
    # runs number checkpoints by step
    return None if latest is None else int(latest.rsplit("-", 1)[1])


def resume_note(options: PretrainingOptions) -> str:
    """What the run does with an earlier demo's checkpoint in `output_dir`; '' without one."""
    step = trained_steps(options.output_dir)
    if step is None:
        return ""
    if step >= options.num_train_steps:
        return (
            f"   {options.output_dir} holds a model trained {step} steps, no fewer than "
            "--num_train_steps: evaluating it as it is "
            f"(delete {options.output_dir} to train again)"
        )
    return f"   Resuming the run in {options.output_dir} at step {step} (delete it to start over)"


def short_phases(options: PretrainingOptions) -> list[PretrainingOptions]:
    """The phases before the last, one at each of `SHORT_SEQ_LENGTHS` that is at most half of
    --max_seq_length: as many predictions and tokens per batch as `options`, --num_train_steps of
    them, each from the weights of the one before,
    under `output_dir/seq_<length>`, not evaluated."""
    phases = []
    for length in SHORT_SEQ_LENGTHS:
        ratio = options.max_seq_length // length
        if ratio < 2:
            break
        phases.append(
            dataclasses.replace(
                options,
                output_dir=os.path.join(options.output_dir, f"seq_{length}"),
                max_seq_length=length,
                max_predictions_per_seq=max(1, options.max_predictions_per_seq // ratio),
                train_batch_size=options.train_batch_size * ratio,
                do_eval=False,
                init_checkpoint=phases[-1].output_dir if phases else options.init_checkpoint,
            )
        )
    return phases


def prepare_data(
    options: PretrainingOptions,
    vocab_file: str | None = None,
    language: DemoLanguage = LANGUAGES["en"],
):
    """Fetches the sample and the vocab, holds out every tenth article and writes the record files
    under `output_dir/data`; returns (options with input_file and eval_file set, `short_phases` with
    their input_file set, vocab_file, the held-out articles' text file)."""
    data_dir = pathlib.Path(options.output_dir) / "data"
    print(f"1/5 Fetching {language.description} (cached after the first run)...")
    corpus, vocab_file = language.fetch_corpus(), vocab_file or language.fetch_vocab()
    train_text, heldout_text = split_corpus(corpus, data_dir, language.max_articles)
    # Beside the checkpoints, so that export_model.py and fine-tuning find everything in output_dir.
    copy = pathlib.Path(options.output_dir) / "vocab.txt"
    # --vocab_file may be on gs://
    if io_utils.canonical_path(copy) != io_utils.canonical_path(vocab_file):
        with io_utils.atomic_output(copy) as tmp:
            tf.io.gfile.copy(vocab_file, tmp, overwrite=True)
    vocab_file = str(copy)
    options = _config_for_vocab(options, vocab_file, data_dir)

    masking = (
        ""
        if language.word_segmenter == "none"
        else f", masking whole {language.word_segmenter} words"
    )
    print(f"2/5 Writing pretraining TFRecords with bert_tf's generator{masking}...")
    segmenter_name = language.word_segmenter
    train_records = _create_records(
        train_text, data_dir / "train.tfrecord", vocab_file, options, segmenter_name
    )
    heldout_records = _create_records(
        heldout_text, data_dir / "heldout.tfrecord", vocab_file, options, segmenter_name
    )
    shorts = [
        dataclasses.replace(
            short,
            input_file=_create_records(
                train_text,
                data_dir / f"train_{short.max_seq_length}.tfrecord",
                vocab_file,
                short,
                segmenter_name,
            ),
        )
        for short in short_phases(options)
    ]
    options = dataclasses.replace(options, input_file=train_records, eval_file=heldout_records)
    return options, shorts, vocab_file, heldout_text


def _config_for_vocab(
    options: PretrainingOptions, vocab_file: str, data_dir: pathlib.Path
) -> PretrainingOptions:
    """`options` with a copy of its config whose `vocab_size` is the vocab's, where they differ
    (the tiny config is sized for the uncased vocab); in a folder named as the config's."""
    config = BertConfig.from_json_file(options.bert_config_file)
    num_tokens = len(Vocab.from_file(vocab_file))
    if config.vocab_size == num_tokens:
        return options
    path = data_dir / pathlib.Path(options.bert_config_file).parent.name / "bert_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    dataclasses.replace(config, vocab_size=num_tokens).to_json_file(path)
    return dataclasses.replace(options, bert_config_file=str(path))


def _create_records(
    text: pathlib.Path,
    output: pathlib.Path,
    vocab_file,
    options: PretrainingOptions,
    word_segmenter: str = "none",
) -> str:
    """Runs bert_tf's generator on one corpus file (with a
    segmenter, masking its whole words); prints what it wrote."""
    data_options = PretrainingDataOptions(
        vocab_file=str(vocab_file),
        do_lower_case=options.do_lower_case,
        max_seq_length=options.max_seq_length,
        max_predictions_per_seq=options.max_predictions_per_seq,
        dupe_factor=DUPE_FACTOR,
        random_seed=options.random_seed if options.random_seed is not None else 12345,
        do_whole_word_mask=word_segmenter != "none",
        word_segmenter=word_segmenter,
        next_sentence_prediction=options.next_sentence_prediction,
    )
    stats = create_pretraining_data(
        [str(text)], [str(output)], data_options, num_workers=os.cpu_count() or 1, progress=False
    )
    words = (
        f", masked words of {stats.mean_masked_word_chars:.2f} characters"
        if word_segmenter != "none"
        else ""
    )
    print(f"    {output.name}: {stats.examples:,} examples in {stats.seconds:.1f} s{words}")
    return str(output)


def _restore_model(options: PretrainingOptions):
    """The trained pretraining model, restored from its last checkpoint."""
    model, _ = build_model(
        BertConfig.from_json_file(options.bert_config_file), options, tf.distribute.get_strategy()
    )
    load_checkpoint(options.output_dir, model)
    return model


def _show_fill_mask(
    model, tokenizer: BertTokenizer, heldout_text: pathlib.Path, seq_length: int, count: int = 5
):
    """Fills a [MASK] in held-out sentences (cut to `seq_length` tokens) with the trained model."""
    rng = np.random.default_rng(0)
    sentences = _heldout_sentences(heldout_text)
    shown = 0
    for sentence in rng.permutation(sentences):
        masked = fill_mask.mask_one_word(tokenizer, sentence, rng, max_tokens=seq_length - 2)
        if masked is None:
            continue
        ids, index, original = masked
        tokens = tokenizer.convert_ids_to_tokens(ids)
        predictions = fill_mask.top_predictions(model, tokenizer, ids, index)
        _print_prediction(
            " ".join(tokens).replace(" ##", ""), tokenizer.vocab.tokens[original], predictions
        )
        shown += 1
        if shown == count:
            break
    logging.info("Showed %d fill-mask examples", shown)


def _export_and_query(
    model,
    tokenizer: BertTokenizer,
    heldout_text: pathlib.Path,
    export_dir: pathlib.Path,
    seq_length: int,
):
    """Exports the Hub-style pair (inputs of `seq_length` tokens), loads it back and fills a [MASK]
    in a held-out sentence through it."""
    paths = export_hub_pair(model, export_dir, tokenizer=tokenizer, seq_length=seq_length)
    preprocessing, encoder = (
        tf.saved_model.load(paths[name]) for name in ("preprocessing", "encoder")
    )
    rng = np.random.default_rng(1)
    sentences = _heldout_sentences(heldout_text)
    for sentence in rng.permutation(sentences):
        if (
            masked := fill_mask.mask_one_word(tokenizer, sentence, rng, max_tokens=seq_length - 2)
        ) is not None:
            break
    ids, index, original = masked
    # "[MASK]" stays one token
    text = " ".join(tokenizer.convert_ids_to_tokens(ids)).replace(" ##", "")
    inputs = preprocessing(tf.constant([text]))
    mask_id = preprocessing.tokenize.get_special_tokens_dict()["mask_id"]
    # [1, 1]
    positions = tf.cast(tf.where(inputs["input_word_ids"][0] == mask_id), tf.int32)[None, :, 0]
    # [vocab]
    logits = encoder.mlm({**inputs, "masked_lm_positions": positions})["mlm_logits"][0, 0]
    probabilities, best = tf.math.top_k(tf.nn.softmax(logits), k=5)
    print(
        f"  tf.saved_model.load('{paths['preprocessing']}') "
        f"and ('{paths['encoder']}'), then encoder.mlm:"
    )
    _print_prediction(
        text,
        tokenizer.vocab.tokens[original],
        [(tokenizer.vocab.tokens[i], p) for i, p in zip(best.numpy(), probabilities.numpy())],
    )


def _masked_chinese_words(
    tokenizer: BertTokenizer,
    heldout_text: pathlib.Path,
    word_segmenter: str,
    seq_length: int,
    count: int = 6,
) -> list[tuple[str, str]]:
    """`count` held-out sentences of 15 to 60 characters with a whole word masked: (text, word)."""
    rng = np.random.default_rng(0)
    cut, vocab_tokens = segmenter(word_segmenter), set(tokenizer.vocab.tokens)
    sentences = [
        s for s in heldout_text.read_text(encoding="utf-8").splitlines() if 15 <= len(s) <= 60
    ]
    masked = []
    for sentence in rng.permutation(sentences):
        found = fill_mask.mask_chinese_word(sentence, cut(sentence), vocab_tokens, rng)
        if found is not None and len(tokenizer.tokenize([found[0]])[0]) <= seq_length - 2:
            masked.append(found)
        if len(masked) == count:
            break
    return masked


def _show_filled_word(model, tokenizer: BertTokenizer, text: str, word: str) -> None:
    """The trained model's best token at each [MASK] of `text`, and the top 5 at the first."""
    ids = tokenizer.tokenize([text])[0].numpy().tolist()
    indices = [i for i, token_id in enumerate(ids) if token_id == tokenizer.vocab.mask_id]
    predictions = fill_mask.predictions_at(model, tokenizer, ids, indices)
    _print_word_prediction(text, word, predictions)


def _export_and_query_text(
    model, tokenizer: BertTokenizer, text: str, word: str, export_dir: pathlib.Path, seq_length: int
) -> None:
    """Exports the Hub-style pair, loads it back and fills in the masked word of raw `text`."""
    paths = export_hub_pair(model, export_dir, tokenizer=tokenizer, seq_length=seq_length)
    preprocessing, encoder = (
        tf.saved_model.load(paths[name]) for name in ("preprocessing", "encoder")
    )
    inputs = preprocessing(tf.constant([text]))
    mask_id = preprocessing.tokenize.get_special_tokens_dict()["mask_id"]
    # [1, masks]
    positions = tf.cast(tf.where(inputs["input_word_ids"][0] == mask_id), tf.int32)[None, :, 0]
    probabilities = tf.nn.softmax(
        encoder.mlm({**inputs, "masked_lm_positions": positions})["mlm_logits"][0]
    )
    top, best = tf.math.top_k(probabilities, k=5)  # [masks, 5]
    print(
        f"  tf.saved_model.load('{paths['preprocessing']}') "
        f"and ('{paths['encoder']}'), then encoder.mlm:"
    )
    _print_word_prediction(
        text,
        word,
        [
            [(tokenizer.vocab.tokens[i], p) for i, p in zip(ids, ps)]
            for ids, ps in zip(best.numpy(), top.numpy())
        ],
    )


def _print_word_prediction(text: str, word: str, predictions) -> None:
    """`predictions`: the top tokens and probabilities at each [MASK] of the word."""
    print(f"  {text}")
    filled = "".join(tokens[0][0] for tokens in predictions)
    print(
        f"    answer: {word}   filled in: {filled}   top 5 at the first: "
        + ", ".join(f"{token} {p:.2f}" for token, p in predictions[0])
    )


def _heldout_sentences(heldout_text: pathlib.Path) -> list[str]:
    return [
        s
        for s in heldout_text.read_text(encoding="utf-8").splitlines()
        if 8 <= len(s.split()) <= 25
    ]


def _print_prediction(text: str, answer: str, predictions) -> None:
    print(f"  {text}")
    print(
        f"    answer: {answer:<12} top 5: "
        + ", ".join(f"{token} {p:.2f}" for token, p in predictions)
    )
