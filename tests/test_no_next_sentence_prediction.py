"""Pretraining without next-sentence prediction: packed text, no label or head, and the checkpoints
loading everywhere."""

import dataclasses
import pathlib
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    run_script,
    write_file,
    write_pretraining_records,
    write_tiny_config,
    write_word_vocab,
)
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import convert, load_checkpoint
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.data import dynamic_masking, pretraining_features
from bert_tf.data import pretraining_data_generator as generator
from bert_tf.data.pretraining_dataset import InputError
from bert_tf.data.pretraining_instances import Documents, pack_windows, text_windows
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.models import BertEncoder, BertPretrainer
from bert_tf.pretraining.driver import PretrainingOptions, run_pretraining
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tokenization import BertTokenizer, Vocab

SEQ, PREDICTIONS = 16, 3
CLS, SEP, PAD = 1, 2, 0


def test_windows_are_the_documents_text_full_but_the_last_with_a_separator_between_documents():
    # Documents 0: tokens 0-4 (sentences 0-1, 2-4), 1: 5-6, 2: 7-9.
    documents = Documents(
        token_ids=np.arange(100, 110, dtype=np.int32),
        sentence_splits=np.array([0, 2, 5, 7, 10]),
        document_splits=np.array([0, 2, 3, 4]),
    )
    windows = text_windows(documents, [np.array([2, 0, 1]), np.array([1, 2, 0])], window_length=4)
    packed = pack_windows(windows, documents.token_ids, CLS, SEP, PAD)
    text = [
        [CLS, 107, 108, 109, SEP, SEP],
        [CLS, 100, 101, 102, 103, SEP],
        [CLS, 104, SEP, 105, 106, SEP],
        [CLS, SEP, 105, 106, SEP, SEP],
        [CLS, 107, 108, 109, SEP, SEP],
        [CLS, 100, 101, 102, 103, SEP],
        [CLS, 104, SEP, PAD, PAD, PAD],
    ]
    np.testing.assert_array_equal(packed["input_ids"], text)
    np.testing.assert_array_equal(packed["input_mask"].sum(1), [6] * 6 + [3])
    assert not packed["segment_ids"].any()


def synthetic_corpus(num_documents=40, seed=0):
    """Documents of sentences of the words `t0`, `t1`, ...: a token's number is its place in the
    corpus."""
    rng = np.random.default_rng(seed)
    documents, n = [], 0
    for _ in range(num_documents):
        sentences = []
        for _ in range(rng.integers(1, 5)):
            length = int(rng.integers(1, 8))
            sentences.append(" ".join(f"t{k}" for k in range(n, n + length)))
            n += length
        documents.append(sentences)
    return documents, n


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """(corpus documents, vocab file, the corpus file, no-NSP records written by one worker)."""
    tmp = tmp_path_factory.mktemp("data")
    documents, num_tokens = synthetic_corpus()
    corpus = write_file(tmp / "corpus.txt", "\n\n".join("\n".join(d) for d in documents) + "\n")
    vocab = write_word_vocab(tmp / "vocab.txt", [f"t{k}" for k in range(num_tokens)])
    options = generator.PretrainingDataOptions(
        vocab,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=2,
        next_sentence_prediction=False,
    )
    records = [str(tmp / "one" / f"train-{i}") for i in range(2)]
    stats = generator.create_pretraining_data(
        [str(corpus)], records, options, chunk_bytes=1024, progress=False
    )
    assert "no next-sentence labels" in stats.summary(next_sentence_prediction=False)
    return documents, vocab, str(corpus), records


def token_numbers(ids, vocab):
    """Vocab ids -> the `tN` token's N; -1 for [SEP]."""
    tokens = vocab.tokens
    return [-1 if i == vocab.sep_id else int(tokens[i][1:]) for i in ids]


def check_packed_text(features, documents, vocab, max_short):
    """Every example is `[CLS] text [SEP]`, segment 0, its text contiguous pieces of the corpus with
    [SEP] between documents; all but `max_short` examples are full."""
    first_tokens, last_tokens, n = set(), set(), 0
    for sentences in documents:
        first_tokens.add(n)
        n += sum(len(s.split()) for s in sentences)
        last_tokens.add(n - 1)
    ids, mask = features["input_ids"].copy(), features["input_mask"]
    predicted = features["masked_lm_weights"] > 0
    rows = np.nonzero(predicted)[0]
    ids[rows, features["masked_lm_positions"][predicted]] = features["masked_lm_ids"][predicted]
    assert not features["segment_ids"].any()
    lengths = mask.sum(1)
    assert (lengths < SEQ).sum() <= max_short
    for row, length in zip(ids, lengths):
        assert row[0] == vocab.cls_id and row[length - 1] == vocab.sep_id
        numbers = token_numbers(row[1 : length - 1], vocab)
        for k, (before, after) in enumerate(zip(numbers, numbers[1:])):
            if before >= 0 and after >= 0:
                assert after == before + 1  # contiguous text
            elif before >= 0:
                assert before in last_tokens  # a [SEP] ends a document
            elif after >= 0:
                assert after in first_tokens


def read_records(files, next_sentence_prediction=False):
    dataset = (
        tf.data.TFRecordDataset(files)
        .batch(10_000)
        .map(
            lambda s: pretraining_features.parse_examples(
                s, SEQ, PREDICTIONS, next_sentence_prediction
            )
        )
    )
    return {name: value.numpy() for name, value in next(iter(dataset)).items()}


def test_records_are_packed_text_without_labels_whatever_the_workers(data, tmp_path):
    documents, vocab_file, corpus, records = data
    first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(records[0]))).numpy())
    names = set(pretraining_features.FEATURE_NAMES) - {"next_sentence_labels"}
    assert set(first.features.feature) == names
    vocab = Vocab.from_file(vocab_file)
    chunks = 3  # the corpus's bytes over --chunk_mb: a short example at the end of each, at most
    check_packed_text(read_records(records), documents, vocab, max_short=chunks)

    out = tmp_path / "two" / "train"
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={corpus}",
        f"--output_file={out}",
        "--num_output_shards=2",
        f"--vocab_file={vocab_file}",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--dupe_factor=2",
        f"--chunk_mb={1024 / 2**20}",
        "--num_workers=2",
        "--next_sentence_prediction=false",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "no next-sentence labels" in result.stdout
    written = sorted(out.parent.iterdir())
    assert [p.read_bytes() for p in written] == [pathlib.Path(p).read_bytes() for p in records]


def test_dynamic_masking_packs_text_without_labels(data):
    documents, vocab_file, corpus, _ = data
    dataset = dynamic_masking.dynamic_masking_dataset(
        [corpus],
        vocab_file,
        batch_size=64,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        seed=1,
        next_sentence_prediction=False,
    )
    features = {name: value.numpy() for name, value in next(iter(dataset)).items()}
    assert "next_sentence_labels" not in features
    check_packed_text(features, documents, Vocab.from_file(vocab_file), max_short=0)


def test_pretrainer_without_next_sentence_head():
    encoder = BertEncoder(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    model = BertPretrainer(encoder, next_sentence_prediction=False)
    model.build_with_dummy_inputs()
    assert model.next_sentence_head is None
    assert [m.name for m in model.pretraining_metrics] == ["masked_lm_accuracy", "masked_lm_loss"]
    assert not any("next_sentence" in v.path for v in model.weights)
    restored = BertPretrainer.from_config(model.get_config())
    assert restored.next_sentence_head is None


def options(tmp_path, records, vocab_file, **overrides):
    vocab_size = len(Vocab.from_file(vocab_file))
    values = dict(
        bert_config_file=write_tiny_config(tmp_path, vocab_size=vocab_size),
        input_file=",".join(records),
        output_dir=str(tmp_path / "out"),
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        train_batch_size=8,
        eval_batch_size=8,
        learning_rate=1e-3,
        num_train_steps=4,
        num_warmup_steps=1,
        save_checkpoints_steps=2,
        iterations_per_loop=2,
        max_eval_steps=2,
        verbose=False,
        do_eval=True,
        next_sentence_prediction=False,
    )
    values.update(overrides)
    return PretrainingOptions(**values)


@pytest.fixture(scope="module")
def pretrained(data, tmp_path_factory):
    _, vocab_file, _, records = data
    opts = options(tmp_path_factory.mktemp("pretrained"), records, vocab_file)
    return opts, run_pretraining(opts, tf.distribute.get_strategy())


def test_pretraining_has_no_next_sentence_loss_or_metric(pretrained):
    opts, results = pretrained
    assert set(results) == {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss"}
    assert results["loss"] == results["masked_lm_loss"]
    events = pathlib.Path(opts.output_dir, "train").glob("events.out.tfevents.*")
    tags = {
        v.tag
        for path in events
        for e in tf.compat.v1.train.summary_iterator(str(path))
        for v in e.summary.value
    }
    assert tags and not any("next_sentence" in tag for tag in tags)
    latest = tf.train.latest_checkpoint(opts.output_dir)
    names = [name for name, _ in tf.train.list_variables(latest)]
    assert any(name.startswith("model/masked_lm_head/") for name in names)
    assert not any("next_sentence" in name for name in names)


def test_records_of_the_other_mode_are_refused_in_one_line(data, pretrained, tmp_path):
    _, vocab_file, _, records = data
    with pytest.raises(
        InputError,
        match=rf"^{records[0]}: written without next-sentence "
        r"prediction \(create_pretraining_data.py "
        r"`next_sentence_prediction`=false\); train on it with "
        r"`next_sentence_prediction`=false$",
    ):
        run_pretraining(
            options(tmp_path, records, vocab_file, next_sentence_prediction=True),
            tf.distribute.get_strategy(),
        )
    assert not (tmp_path / "out").exists()


def test_resuming_across_modes_is_refused_and_resuming_continues(pretrained, tmp_path):
    opts, _ = pretrained
    output_dir = shutil.copytree(opts.output_dir, tmp_path / "resumed")
    resumed = dataclasses.replace(
        opts, output_dir=str(output_dir), num_train_steps=6, do_eval=False
    )
    latest = tf.train.latest_checkpoint(str(output_dir))
    pairs = write_pretraining_records(tmp_path / "pairs.tfrecord", 8, SEQ, PREDICTIONS, 50)
    with pytest.raises(
        ValueError,
        match=rf"^`next_sentence_prediction`: {latest} was written "
        r"with `next_sentence_prediction`=false; resume it so, "
        r"or start a new `output_dir` with "
        rf"`init_checkpoint`={latest}$",
    ):
        run_pretraining(
            dataclasses.replace(resumed, next_sentence_prediction=True, input_file=pairs),
            tf.distribute.get_strategy(),
        )
    run_pretraining(resumed, tf.distribute.get_strategy())
    assert tf.train.latest_checkpoint(str(output_dir)).endswith("ckpt-6")


def test_the_checkpoint_converts_exports_and_fine_tunes(pretrained, data, tmp_path):
    opts, _ = pretrained
    config = BertConfig.from_json_file(opts.bert_config_file)
    reference = BertPretrainer(BertEncoder.from_bert_config(config), next_sentence_prediction=False)
    load_checkpoint(opts.output_dir, reference)
    expected = {name: v.variable.numpy() for name, v in tf1_variables(reference).items()}
    for to in ("tf1", "bert_tf"):
        prefix = convert.convert(opts.output_dir, str(tmp_path / to), to=to)
        converted = BertPretrainer(
            BertEncoder.from_bert_config(config), next_sentence_prediction=False
        )
        report = load_checkpoint(prefix, converted)
        assert not report.missing and not report.unused, (to, report)
        got = tf1_variables(converted)
        assert got.keys() == expected.keys()
        assert not any("seq_relationship" in name for name in got)
        for name, v in got.items():
            np.testing.assert_array_equal(v.variable.numpy(), expected[name])
    encoder = BertEncoder.from_bert_config(config)  # as extract_features.py loads it
    assert not load_checkpoint(opts.output_dir, encoder).missing
    hub = model_from_checkpoint(opts.output_dir, "hub", config)  # export_model.py's model
    assert isinstance(hub, BertPretrainer)
    np.testing.assert_array_equal(
        hub.masked_lm_head.output_bias.numpy(), reference.masked_lm_head.output_bias.numpy()
    )

    _, vocab_file, _, _ = data
    glue = tmp_path / "MRPC"
    rows = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"] + [
        f"{k % 2}\t{k}\t{k + 1}\tt{k} t{k + 1} t{k + 2}\tt{k + 3} t{k + 4}" for k in range(16)
    ]
    for split in ("train", "dev"):
        write_file(glue / f"{split}.tsv", "\n".join(rows) + "\n")
    fine_tuning = FineTuningOptions(
        data_dir=str(glue),
        vocab_file=vocab_file,
        output_dir=str(tmp_path / "fine_tuned"),
        init_checkpoint=opts.output_dir,
        do_train=True,
        do_eval=True,
        max_seq_length=SEQ,
        train_batch_size=8,
        eval_batch_size=8,
        num_train_epochs=1,
        verbose=0,
    )
    task = SentencePredictionTask(fine_tuning, BertTokenizer(vocab_file), "MRPC")
    results = run_finetuning(task, fine_tuning)
    assert 0 <= results["accuracy"] <= 1
