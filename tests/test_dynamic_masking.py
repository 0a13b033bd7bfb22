"""Dynamic masking: static shapes, TFRecord statistics, fresh masks every epoch, seeded masks."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import REPO, write_file
from bert_tf.data import corpus, pretraining_features
from bert_tf.data import pretraining_data_generator as generator
from bert_tf.data.dynamic_masking import dynamic_masking_dataset
from bert_tf.tokenization import Vocab

SEQ, PREDICTIONS, BATCH = 64, 10, 32
OPTIONS = dict(
    batch_size=BATCH,
    max_seq_length=SEQ,
    max_predictions_per_seq=PREDICTIONS,
    shuffle_buffer_size=200,
)


@pytest.fixture(autouse=True)
def no_global_seed():
    """Each test starts from a fresh process's TF random state. tf.data's seeded ops (`shuffle`,
    `Dataset.random`) combine their seed with TF's global seed, which an earlier test on the same
    pytest worker may have set (`keras.utils.set_random_seed`): the batches would then depend on
    the order the tests ran in, and differ from a fresh process's."""
    tf.random.set_seed(None)


@pytest.fixture(scope="module")
def vocab(uncased_vocab_file):
    return Vocab.from_file(uncased_vocab_file)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, wikipedia_sample_lines):
    lines = wikipedia_sample_lines[: wikipedia_sample_lines.index("", 2000)]
    return str(write_file(tmp_path_factory.mktemp("corpus") / "wiki.txt", "\n".join(lines) + "\n"))


def statistics(batches, vocab):
    """masked fraction, [MASK]/unchanged shares, NSP random fraction, mean real length."""
    real = predicted = masks = kept = random_next = examples = 0
    for batch in batches:
        weights = batch["masked_lm_weights"] > 0
        at = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], axis=1)
        real += batch["input_mask"].sum()
        predicted += weights.sum()
        masks += (weights & (at == vocab.mask_id)).sum()
        kept += (weights & (at == batch["masked_lm_ids"])).sum()
        random_next += batch["next_sentence_labels"].sum()
        examples += len(weights)
    return np.array(
        [
            predicted / real,
            masks / predicted,
            kept / predicted,
            random_next / examples,
            real / examples / SEQ,
        ]
    )


def dataset(corpus_file, vocab, seed=7, **kwargs):
    return dynamic_masking_dataset([corpus_file], vocab.path, seed=seed, **OPTIONS, **kwargs)


def assert_same_batches(batches, others):
    assert len(batches) == len(others)
    for index, (batch, other) in enumerate(zip(batches, others)):
        assert set(batch) == set(other)
        for name in batch:
            np.testing.assert_array_equal(
                batch[name], other[name], err_msg=f"batch {index}, {name}"
            )


def batches_in_a_new_process(corpus_file, vocab, count, tmp_path):
    """The first `count` batches of `dataset(corpus_file, vocab)`, read in a fresh Python."""
    path = tmp_path / "batches.npz"
    script = (
        f"import numpy as np\nfrom bert_tf.data.dynamic_masking import dynamic_masking_dataset\n"
        f"batches = dynamic_masking_dataset([{corpus_file!r}], {vocab.path!r}, seed=7, "
        f"**{OPTIONS!r})\nnp.savez({str(path)!r}, **{{f'{{i}}/{{name}}': value for i, batch in "
        f"enumerate(batches.take({count}).as_numpy_iterator()) "
        "for name, value in batch.items()})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    with np.load(path) as saved:
        return [
            {name: saved[f"{i}/{name}"] for name in pretraining_features.FEATURE_NAMES}
            for i in range(count)
        ]


def test_static_shapes_and_schema_dtypes(corpus_file, vocab):
    spec = dataset(corpus_file, vocab).element_spec
    lengths = pretraining_features.feature_lengths(SEQ, PREDICTIONS)
    assert set(spec) == set(pretraining_features.FEATURE_NAMES)
    for name, length in lengths.items():
        expected = [BATCH] if name == "next_sentence_labels" else [BATCH, length]
        assert spec[name].shape == expected
        assert spec[name].dtype == (
            tf.float32 if name in pretraining_features.FLOAT_FEATURES else tf.int32
        )


def test_same_statistics_as_the_tfrecord_path(tmp_path, corpus_file, vocab):
    batches = list(dataset(corpus_file, vocab).take(60).as_numpy_iterator())
    for batch in batches:
        weights = batch["masked_lm_weights"] > 0
        assert not np.isin(
            batch["masked_lm_ids"][weights], [vocab.cls_id, vocab.sep_id, vocab.pad_id]
        ).any()
        assert np.all(batch["input_ids"][:, 0] == vocab.cls_id)
    options = generator.PretrainingDataOptions(
        vocab_file=vocab.path,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=1,
    )
    path = str(tmp_path / "static.tfrecord")
    generator.create_pretraining_data([corpus_file], [path], options, progress=False)
    static = (
        tf.data.TFRecordDataset(path)
        .batch(BATCH)
        .map(lambda s: pretraining_features.parse_examples(s, SEQ, PREDICTIONS))
    )
    dynamic_stats, static_stats = (
        statistics(batches, vocab),
        statistics(static.as_numpy_iterator(), vocab),
    )
    # masked fraction within 0.01, 80/10/10 within 2 points, NSP and fill within 5 points.
    difference = np.abs(dynamic_stats - static_stats)
    assert np.all(difference <= [0.01, 0.02, 0.02, 0.05, 0.05]), (dynamic_stats, static_stats)


def special_ids_left_unmasked(features, vocab) -> list[list[int]]:
    """Per example, the special ids among its real tokens that are not masked positions."""
    masked = np.zeros(features["input_ids"].shape, bool)
    np.put_along_axis(
        masked, features["masked_lm_positions"], features["masked_lm_weights"] > 0, axis=1
    )
    specials = [vocab.cls_id, vocab.sep_id, vocab.mask_id, vocab.pad_id, vocab.unk_id]
    return [
        [token for token in row[real & ~mask] if token in specials]
        for row, real, mask in zip(features["input_ids"], features["input_mask"] > 0, masked)
    ]


def test_literal_special_tokens_in_the_corpus_are_text(tmp_path, vocab):
    lines = [
        "the [SEP] token and a [MASK] word .",
        "a [CLS] here and [PAD] there [UNK] .",
        "plain words only .",
    ]
    path = write_file(
        tmp_path / "special.txt", "".join("\n".join(lines * 3) + "\n\n" for _ in range(20))
    )
    records = str(tmp_path / "special.tfrecord")
    generator.create_pretraining_data(
        [str(path)],
        [records],
        generator.PretrainingDataOptions(
            vocab_file=vocab.path,
            max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS,
            dupe_factor=1,
        ),
        progress=False,
    )
    from_records = next(
        iter(
            tf.data.TFRecordDataset(records)
            .batch(1000)
            .map(
                lambda serialized: pretraining_features.parse_examples(serialized, SEQ, PREDICTIONS)
            )
        )
    )
    from_text = next(dataset(str(path), vocab).as_numpy_iterator())
    for features in ({name: value.numpy() for name, value in from_records.items()}, from_text):
        assert special_ids_left_unmasked(features, vocab) == [
            [vocab.cls_id, vocab.sep_id, vocab.sep_id]
        ] * len(features["input_ids"])


def test_documents_end_at_lines_blank_to_python_str_strip(vocab):
    from bert_tf.data.dynamic_masking import _segments
    from bert_tf.tokenization import BertTokenizer

    lines = ["one two .", "\u3000", "three .", "\u00a0\t", "four .", " ", "five .", "\x1c", "six ."]
    # create_pretraining_data's test
    assert [not line.strip() for line in lines] == [False, True] * 4 + [False]
    _, documents = _segments(tf.constant(lines), BertTokenizer(vocab.path), segment_tokens=100)
    assert documents.numpy().tolist() == [0, 1, 2, 3, 4]


def test_fresh_masks_every_epoch(tmp_path, vocab):
    text = "\n\n".join(
        f"document {d} starts here .\nit has words {d} and more words .\nthe end of {d} ."
        for d in range(8)
    )
    path = tmp_path / "tiny.txt"
    path.write_text(text + "\n", encoding="utf-8")
    masks_by_text = {}
    for batch in dataset(str(path), vocab).take(40).as_numpy_iterator():
        original = batch["input_ids"].copy()
        np.put_along_axis(
            original,
            batch["masked_lm_positions"],
            np.where(
                batch["masked_lm_weights"] > 0,
                batch["masked_lm_ids"],
                np.take_along_axis(original, batch["masked_lm_positions"], 1),
            ),
            1,
        )
        for i in range(BATCH):
            key = original[i].tobytes()
            masks_by_text.setdefault(key, set()).add(batch["input_ids"][i].tobytes())
    repeated = [masks for masks in masks_by_text.values() if len(masks) > 1]
    assert len(repeated) >= len(masks_by_text) // 2  # the same text comes back with other masks


def test_input_context_shards_and_splits_the_batch(corpus_file, vocab):
    context = tf.distribute.InputContext(
        num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=2
    )
    spec = dataset(corpus_file, vocab, input_context=context).element_spec
    assert spec["input_ids"].shape == [BATCH // 2, SEQ]


def test_blocks_without_tokens_are_skipped(tmp_path, vocab):
    text = (
        "the first document has words .\nand a second line .\n\n"
        + "\x01\n" * 1500
        + "\nanother one here .\n"
    )
    path = tmp_path / "gap.txt"
    path.write_text(text, encoding="utf-8")  # whole blocks of 512 lines hold no token
    batches = list(dataset(str(path), vocab).take(3).as_numpy_iterator())
    assert all(batch["input_mask"].sum(axis=1).min() > 3 for batch in batches)


def test_a_share_without_tokens_is_refused_at_once(tmp_path, vocab):
    # Each of these would make the endless stream search its input forever without yielding.
    for name, text in [("blank.txt", "\n \n\n"), ("control.txt", "\x01\x02\n\n\x7f\n")]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(
            corpus.CorpusError,
            match=rf"^no text that tokenizes to any token in the corpus: "
            rf"1 files, the first .*{name}$",
        ):
            dataset(str(path), vocab)
    short = tmp_path / "short.txt"
    # one block: pipeline 1 of 2 gets none
    short.write_text("a few words .\n" * 100, encoding="utf-8")
    first, second = (
        tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=i) for i in (0, 1)
    )
    assert dataset(str(short), vocab, input_context=first).element_spec
    with pytest.raises(
        corpus.CorpusError,
        match=r"^no text that tokenizes to any token in input pipeline 1 of "
        r"2's share of the corpus \(.*\): 1 files, the first .*short.txt$",
    ):
        dataset(str(short), vocab, input_context=second)
    with pytest.raises(TypeError, match="a list of corpus files"):
        dynamic_masking_dataset(str(short), vocab.path)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_batches_masks_included(tmp_path, corpus_file, vocab):
    batches = list(dataset(corpus_file, vocab).take(3).as_numpy_iterator())
    assert_same_batches(batches, list(dataset(corpus_file, vocab).take(3).as_numpy_iterator()))
    assert_same_batches(batches, batches_in_a_new_process(corpus_file, vocab, 3, tmp_path))


def test_masks_differ_by_row_batch_pass_and_seed(tmp_path, vocab):
    # Every example is "[CLS] text [SEP] text [SEP]": examples differ only in their masks.
    path = write_file(
        tmp_path / "same.txt", "the quick brown fox jumps over the lazy dog .\n\n" * 20
    )
    stream = dataset(str(path), vocab)
    first, second = stream.take(2).as_numpy_iterator()
    next_pass = next(stream.as_numpy_iterator())
    other_seed = next(dataset(str(path), vocab, seed=8).as_numpy_iterator())
    assert len({row.tobytes() for row in first["masked_lm_positions"]}) > BATCH // 2
    for other in second, next_pass, other_seed:
        assert not np.array_equal(first["input_ids"], other["input_ids"])
        assert not np.array_equal(first["masked_lm_positions"], other["masked_lm_positions"])
