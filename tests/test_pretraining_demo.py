"""The embedded demo (`python run_pretraining.py` with no flags): its held-out split, its
baselines, its records and export following the flags, and a short run of the whole job."""

import dataclasses
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    REPO,
    random_pretraining_batch,
    script_failures,
    tiny_config,
    write_pretraining_batch,
    write_pretraining_records,
    write_word_vocab,
)
from bert_tf.bert_config import BertConfig
from bert_tf.data import pretraining_features
from bert_tf.pretraining import demo, fill_mask
from bert_tf.pretraining.demo import majority_baselines, split_corpus
from bert_tf.pretraining.driver import PretrainingOptions, build_model
from bert_tf.tokenization import BertTokenizer


def test_split_corpus_holds_out_every_tenth_article(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "\n\n".join(f"Article {i} begins.\nArticle {i} ends." for i in range(25)) + "\n"
    )
    train, heldout = split_corpus(corpus, tmp_path / "split")
    heldout_articles = heldout.read_text().strip().split("\n\n")
    assert [article.split()[1] for article in heldout_articles] == ["9", "19"]
    assert heldout_articles[0] == "Article 9 begins.\nArticle 9 ends."
    assert len(train.read_text().strip().split("\n\n")) == 23


def eval_options(records, tmp_path, **kwargs) -> PretrainingOptions:
    return PretrainingOptions(
        bert_config_file=None,
        input_file=None,
        output_dir=str(tmp_path),
        eval_file=str(records),
        max_seq_length=16,
        max_predictions_per_seq=4,
        **kwargs,
    )


@pytest.mark.parametrize("max_eval_steps, examples", [(1000, 32), (1, 16)])
def test_majority_baselines_by_hand_on_the_evaluated_batches(tmp_path, max_eval_steps, examples):
    """40 records in batches of 16: the evaluation scores 2 (the remainder dropped), or 1."""
    records = write_pretraining_records(tmp_path / "records.tfrecord", 40, 16, 4, 97, seed=5)
    batch = random_pretraining_batch(40, 16, 4, 97, seed=5)
    batch = {name: value[:examples] for name, value in batch.items()}
    counts = np.bincount(batch["masked_lm_ids"][batch["masked_lm_weights"] > 0], minlength=97)
    random_next = batch["next_sentence_labels"].mean()
    options = eval_options(records, tmp_path, eval_batch_size=16, max_eval_steps=max_eval_steps)
    baselines = majority_baselines(demo.evaluated_batches(options))
    assert counts[baselines["masked_lm_token"]] == counts.max()
    np.testing.assert_allclose(baselines["masked_lm_accuracy"], counts.max() / counts.sum())
    np.testing.assert_allclose(
        baselines["next_sentence_accuracy"], max(random_next, 1 - random_next)
    )


def test_accuracy_at_mask_inputs_counts_only_the_predictions_that_see_mask(tmp_path):
    mask_id = 3
    batch = random_pretraining_batch(40, 16, 4, 97, seed=8)
    rows = np.arange(40)[:, None]
    batch["input_ids"][rows, batch["masked_lm_positions"][:, :2]] = (
        mask_id  # 2 of the 3 real slots see [MASK],
    )
    # the third does not
    batch["input_ids"][rows[:, 0], batch["masked_lm_positions"][:, 2]] = mask_id + 1
    model, _ = build_model(
        tiny_config(),
        PretrainingOptions(bert_config_file=None, input_file=None, output_dir=str(tmp_path)),
        tf.distribute.get_strategy(),
    )
    best = (
        model({name: tf.constant(value) for name, value in batch.items()})["masked_lm_logits"]
        .numpy()
        .argmax(-1)
    )
    # right in slots 0 and 2 (labels are no input)
    batch["masked_lm_ids"][:, [0, 2]] = best[:, [0, 2]]
    records = write_pretraining_batch(tmp_path / "records.tfrecord", batch)
    labels = batch["masked_lm_ids"][:, :2]
    batches = demo.evaluated_batches(eval_options(records, tmp_path, eval_batch_size=8))
    result = demo.accuracy_at_mask_inputs(model, batches, mask_id)
    np.testing.assert_allclose(result["masked_lm_accuracy"], (best[:, :2] == labels).mean())
    # slot 0 right, slot 1 mostly not, slot 2 not counted
    assert 0.5 <= result["masked_lm_accuracy"] < 0.6
    np.testing.assert_allclose(
        result["majority_accuracy"], np.bincount(labels.ravel()).max() / labels.size
    )


@pytest.mark.slow
def test_demo_runs_the_whole_job(tmp_path):
    output_dir = tmp_path / "output" / "pretraining_demo"  # the demo's, under its working directory
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "run_pretraining.py"),
            "--num_train_steps=4",
            "--num_warmup_steps=1",
            "--save_checkpoints_steps=4",
            "--iterations_per_loop=2",
            "--log_every=2",
            "--max_eval_steps=2",
            # XLA training is tested in test_pretraining_run; here it would compile each phase.
            "--nojit_compile",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert re.search(
        r"masked LM +0\.\d{3} +\(always predicting the most frequent token: 0\.\d{3}\)", out
    ), out
    assert re.search(
        r"at \[MASK\] inputs +0\.\d{3} +\(always predicting their most frequent token: "
        r"0\.\d{3}\)",
        out,
    ), out
    assert re.search(
        r"next sentence +0\.\d{3} +\(always predicting the majority label: 0\.\d{3}\)", out
    ), out
    assert re.search(
        r"next sentence AUC +0\.\d{3} +\(ranking the pairs at random, or by a constant "
        r"prediction: 0\.500\)",
        out,
    ), out
    # 5 from the checkpoint, 1 from the export
    assert len(re.findall(r"answer: \S+ +top 5: ", out)) == 6, out
    assert "encoder.mlm" in out
    assert (
        "3/5 Pretraining tiny BERT for 4 steps on each of 32, 64 and 128-token sequences in turn, "
        "then evaluating on held-out articles..."
    ) in out, out
    for number, (length, batch, predictions, directory) in enumerate(
        [
            (32, 128, 5, "output/pretraining_demo/seq_32"),
            (64, 64, 10, "output/pretraining_demo/seq_64"),
            (128, 32, 20, "output/pretraining_demo"),
        ],
        start=1,
    ):
        assert (
            f"   Phase {number} of 3: {length}-token sequences, batch {batch}, {predictions} "
            f"predictions each, in {directory}\n"
        ) in out, out
    for length in (32, 64):
        assert tf.train.latest_checkpoint(str(output_dir / f"seq_{length}")).endswith("ckpt-4")
    # the last phase's steps
    assert "global_step = 4\n" in (output_dir / "eval_results.txt").read_text()
    # for export_model.py
    assert (output_dir / "vocab.txt").read_text() == demo.fetch_uncased_vocab().read_text()
    for name in ("preprocessing", "encoder"):
        assert (output_dir / "export" / name / "saved_model.pb").is_file()


def test_a_second_demo_says_what_it_does_with_the_first_ones_checkpoint(tmp_path):
    options = PretrainingOptions(
        bert_config_file="unused",
        input_file="unused",
        output_dir=str(tmp_path),
        num_train_steps=1200,
    )
    assert demo.resume_note(options) == ""
    tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1)), str(tmp_path), 1).save(
        checkpoint_number=400
    )
    assert (
        demo.resume_note(options)
        == f"   Resuming the run in {tmp_path} at step 400 (delete it to start over)"
    )
    assert demo.resume_note(dataclasses.replace(options, num_train_steps=300)) == (
        f"   {tmp_path} holds a model trained 400 steps, no fewer than --num_train_steps: "
        f"evaluating it as it is (delete {tmp_path} to train again)"
    )


def test_the_short_phases_keep_the_tokens_and_predictions_of_a_batch(tmp_path):
    options = demo_options(
        tmp_path,
        max_seq_length=128,
        max_predictions_per_seq=20,
        train_batch_size=32,
        num_train_steps=800,
        init_checkpoint="/pretrained",
    )
    shorts = demo.short_phases(options)
    assert [
        (short.max_seq_length, short.max_predictions_per_seq, short.train_batch_size)
        for short in shorts
    ] == [(32, 5, 128), (64, 10, 64)]
    assert all((short.num_train_steps, short.do_eval) == (800, False) for short in shorts)
    assert [short.output_dir for short in shorts] == [
        str(tmp_path / "out" / f"seq_{n}") for n in (32, 64)
    ]
    # a chain
    assert [short.init_checkpoint for short in shorts] == ["/pretrained", shorts[0].output_dir]
    # 64 tokens is more than half of 127
    assert [
        short.max_seq_length
        for short in demo.short_phases(dataclasses.replace(options, max_seq_length=127))
    ] == [32]
    # not twice 32 tokens
    assert demo.short_phases(dataclasses.replace(options, max_seq_length=63)) == []


def test_a_short_phase_is_skipped_once_done_or_once_a_later_phase_has_begun(tmp_path):
    options = demo_options(
        tmp_path,
        bert_config_file=str(REPO / "configs" / "tiny" / "bert_config.json"),
        num_train_steps=400,
    )
    shorts = [
        dataclasses.replace(
            short, input_file=str(tmp_path / f"no-such-records-{short.max_seq_length}")
        )
        for short in demo.short_phases(options)
    ]

    def first_phase_trained():
        """The phase that _train_short_phases starts, read from its missing records."""
        with pytest.raises(ValueError, match="no-such-records-(32|64)") as error:
            demo._train_short_phases(shorts, options, tf.distribute.get_strategy())
        return int(error.value.args[0].split("no-such-records-")[1][:2])

    def save(directory, step):
        tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1)), directory, 1).save(
            checkpoint_number=step
        )

    assert first_phase_trained() == 32
    save(shorts[0].output_dir, 399)  # cut short: 32 again
    assert first_phase_trained() == 32
    save(shorts[0].output_dir, 400)  # done: on to 64
    assert first_phase_trained() == 64
    save(shorts[0].output_dir, 1)
    save(shorts[1].output_dir, 1)  # the 64-token phase has begun: 32 is not trained again
    assert first_phase_trained() == 64
    save(options.output_dir, 1)  # the last phase has begun: neither is
    demo._train_short_phases(shorts, options, tf.distribute.get_strategy())


def test_flags_the_demo_cannot_use_are_refused(tmp_path):
    """A real run that forgot --input_file must not train its --output_dir on the demo's data; the
    demo evaluates on its own held-out articles, not an --eval_file."""
    cases = [
        (
            [
                f"--output_dir={tmp_path / 'run'}",
                "--do_train",
                "--bert_config_file=configs/tiny/bert_config.json",
            ],
            "--input_file is required with --output_dir "
            "(without both, run_pretraining.py runs the demo)",
        ),
        (
            [f"--eval_file={tmp_path / 'eval.tfrecord'}"],
            "--eval_file needs --output_dir (the demo evaluates on its own held-out articles)",
        ),
        *[
            (
                [flag],
                f"--{name}={value}: the demo always trains, then evaluates, on TFRecords it "
                "writes; give --input_file and --output_dir for another job",
            )
            for flag, name, value in (
                ("--nodo_eval", "do_eval", False),
                ("--nodo_train", "do_train", False),
                ("--dynamic_masking", "dynamic_masking", True),
            )
        ],
    ]
    assert script_failures("run_pretraining.py", *(argv for argv, _ in cases)) == [
        (1, f"run_pretraining.py: error: {message}") for _, message in cases
    ]
    assert not (tmp_path / "run").exists()


def demo_options(tmp_path, **overrides) -> PretrainingOptions:
    """The demo's settings that these tests read; the files are the tests' own."""
    return PretrainingOptions(
        **{
            "bert_config_file": "unused",
            "input_file": "unused",
            "output_dir": str(tmp_path / "out"),
            **overrides,
        }
    )


def _demo_corpus(path) -> pathlib.Path:
    sentences = [
        f"Alpha {word} met Beta near the {word} river again today ."
        for word in ("north", "south", "east", "west", "old", "new", "long", "short")
    ]
    documents = ["\n".join(sentences[i:] + sentences[:i]) for i in range(8)]
    path.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return path


def _share_of_examples_holding(path, token_id, seq, predictions) -> float:
    dataset = (
        tf.data.TFRecordDataset(path)
        .batch(1024)
        .map(lambda records: pretraining_features.parse_examples(records, seq, predictions))
    )
    input_ids = np.concatenate([features["input_ids"] for features in dataset.as_numpy_iterator()])
    return float(np.mean((input_ids == token_id).any(axis=1)))


def test_demo_records_follow_do_lower_case(tmp_path):
    """Lower-cased, most examples start a sentence with the uncased vocab's "alpha"; cased, with the
    cased vocab's "Alpha" (lower-cased text would miss it, and "Alpha" would miss "alpha")."""
    corpus = _demo_corpus(tmp_path / "corpus.txt")
    shares = {}
    for do_lower_case, word in ((True, "alpha"), (False, "Alpha")):
        vocab = write_word_vocab(
            tmp_path / f"{word}.txt", [corpus.read_text()], do_lower_case=do_lower_case
        )
        token_id = BertTokenizer(vocab, do_lower_case=do_lower_case).vocab.tokens.index(word)
        opts = demo_options(
            tmp_path, do_lower_case=do_lower_case, max_seq_length=64, max_predictions_per_seq=10
        )
        records = demo._create_records(corpus, tmp_path / f"{word}.tfrecord", vocab, opts)
        shares[word] = _share_of_examples_holding(records, token_id, 64, 10)
    assert shares["alpha"] > 0.5 and shares["Alpha"] > 0.5, shares


def test_demo_exports_at_max_seq_length(tmp_path):
    corpus = _demo_corpus(tmp_path / "corpus.txt")
    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", [corpus.read_text()]))
    opts = demo_options(tmp_path, max_seq_length=32)
    config = tiny_config(vocab_size=len(tokenizer.vocab))
    model, _ = build_model(config, opts, tf.distribute.get_strategy())
    demo._export_and_query(model, tokenizer, corpus, tmp_path / "export", opts.max_seq_length)
    preprocessing = tf.saved_model.load(str(tmp_path / "export" / "preprocessing"))
    assert preprocessing(tf.constant(["alpha north"]))["input_word_ids"].shape == [1, 32]


def test_chinese_demo_pieces(tmp_path):
    """--demo_language=zh: the first articles only, whole Chinese words masked for filling in, and
    the config sized for bert-base-chinese's vocab (here its committed subset)."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"第{i}篇。\n结束。" for i in range(30)) + "\n", encoding="utf-8")
    train, heldout = split_corpus(corpus, tmp_path / "split", max_articles=20)
    assert len(train.read_text().strip().split("\n\n")) == 18 and heldout.read_text().startswith(
        "第9篇"
    )
    rng = np.random.default_rng(0)
    words = ["南京市", "今天", "发布", "了", "BERT", "计划", "。"]
    text, word = fill_mask.mask_chinese_word(
        "".join(words), words, {"今", "天", "发", "布", "计", "划", "南"}, rng
    )
    assert word in ("今天", "发布", "计划")  # not 南京市 (京, 市 not in the vocab), nor 了 or BERT
    assert text == "南京市今天发布了BERT计划。".replace(word, "[MASK]" * len(word))
    vocab = REPO / "tests" / "fixtures" / "chinese" / "vocab.txt"
    tiny = str(REPO / "configs" / "tiny" / "bert_config.json")
    options = demo._config_for_vocab(
        demo_options(tmp_path, bert_config_file=tiny), str(vocab), tmp_path / "data"
    )
    assert options.bert_config_file == str(tmp_path / "data" / "tiny" / "bert_config.json")
    assert BertConfig.from_json_file(options.bert_config_file).vocab_size == len(
        vocab.read_text().splitlines()
    )
