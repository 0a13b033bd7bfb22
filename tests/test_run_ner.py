"""run_ner.py end to end on a small CoNLL fixture, the token loss's reduction, bad data."""

import pathlib
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import REPO, run_script, tiny_encoder, write_tiny_config, write_word_vocab
from bert_tf.data import conll
from bert_tf.finetuning.losses import SparseCrossEntropy
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.metrics import tagging_metrics
from bert_tf.models import BertTokenClassifier
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.tokenization import BertTokenizer

FIXTURES = REPO / "tests" / "fixtures" / "conll"


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_loss_is_the_mean_over_weighted_tokens(smoothing):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 3)).astype("float32")  # [batch, seq, classes]
    labels = rng.integers(0, 3, size=(2, 5))
    weights = np.array([[0, 1, 1, 0, 0], [0, 1, 0, 1, 1]], "float32")  # first sub-tokens only
    targets = np.eye(3)[labels] * (1 - smoothing) + smoothing / 3
    per_token = -(targets * log_softmax(logits)).sum(axis=-1)  # [batch, seq]
    expected = (per_token * weights).sum() / weights.sum()
    got = float(SparseCrossEntropy(smoothing)(labels, logits, sample_weight=weights))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # Not Keras' default "sum_over_batch_size", which divides by all 10 positions, padding included.
    assert got != pytest.approx((per_token * weights).sum() / weights.size, rel=1e-3)


def test_loss_through_compile_matches_the_weighted_mean():
    """The driver's path: tf.data of (features, labels by output, token weights), a loss dict."""
    model = BertTokenClassifier(tiny_encoder(), num_classes=4, dropout_rate=0.0)
    rng = np.random.default_rng(1)
    ids = rng.integers(5, 90, size=(4, 6)).astype("int32")
    inputs = {
        "input_word_ids": ids,
        "input_mask": np.ones_like(ids),
        "input_type_ids": np.zeros_like(ids),
    }
    labels = rng.integers(0, 4, size=(4, 6)).astype("int32")
    weights = (rng.random((4, 6)) < 0.4).astype("float32")
    model.compile(loss={"logits": SparseCrossEntropy()})
    batches = tf.data.Dataset.from_tensor_slices((inputs, {"logits": labels}, weights)).batch(4)
    got = model.evaluate(batches, verbose=0)
    per_token = -np.take_along_axis(
        log_softmax(model.predict(inputs, verbose=0)["logits"]), labels[..., None], axis=-1
    )[..., 0]
    np.testing.assert_allclose(got, (per_token * weights).sum() / weights.sum(), rtol=1e-4)


def fixture_vocab(tmp_path) -> str:
    words = [
        line.split()[0]
        for name in ("train", "dev", "test")
        for line in (FIXTURES / f"{name}.txt").read_text().splitlines()
        if line.strip()
    ]
    return write_word_vocab(tmp_path / "vocab.txt", [" ".join(words)])


def model_flags(tmp_path) -> list[str]:
    vocab = fixture_vocab(tmp_path)
    config = write_tiny_config(
        tmp_path, vocab_size=len(pathlib.Path(vocab).read_text().splitlines())
    )
    return [f"--vocab_file={vocab}", f"--bert_config_file={config}", "--max_seq_length=32"]


@pytest.mark.parametrize(
    "column, main_metric, metrics",
    [
        (-1, "f1", {"accuracy", "precision", "recall", "f1"}),  # NER tags
        (1, "accuracy", {"accuracy"}),  # part-of-speech tags: word accuracy only
    ],
)
def test_task_scores_words_decoded_from_windows(tmp_path, column, main_metric, metrics):
    data = tmp_path / "data"
    data.mkdir()
    lines = (FIXTURES / "test.txt").read_text().splitlines()  # `word tag`, the tag from one column
    text = "".join(
        f"{line.split()[0]} {line.split()[column]}\n" if line.strip() else "\n" for line in lines
    )
    for name in ("train", "test"):  # the training file gives the label set
        (data / f"{name}.txt").write_text(text)
    options = FineTuningOptions(
        data_dir=str(data),
        vocab_file=fixture_vocab(tmp_path),
        output_dir=str(tmp_path / "out"),
        max_seq_length=16,
    )
    task = TaggingTask(options, BertTokenizer(options.vocab_file))
    assert task.main_metric == main_metric
    encoded = task.encode("test")
    assert len(encoded) > len(encoded.metadata.sentences)  # its long sentence spans several windows
    assert (
        encoded.size_text()
        == f"{len(encoded)} windows from {len(encoded.metadata.sentences)} examples"
    )
    # Logits right only where each word is read from, wrong at its copies in the other windows.
    labels, classes = encoded.labels["logits"], len(task.label_list)
    assert (encoded.sample_weight > encoded.metadata.best).any()  # some words do have copies
    ids = np.where(encoded.metadata.best, labels, (labels + 1) % classes)
    logits = np.eye(classes, dtype="float32")[ids]  # [n, seq, num_classes]
    scores = task.evaluate("test", encoded, {"logits": logits})
    assert scores == {name: 1.0 for name in metrics}
    # One word wrong in one window (the window that word is read from): one word less is right.
    row, position = map(int, np.argwhere(encoded.metadata.best)[5])
    logits[row, position] = np.roll(logits[row, position], 1)
    words = sum(len(s.words) for s in encoded.metadata.sentences)
    assert task.evaluate("test", encoded, {"logits": logits})["accuracy"] == pytest.approx(
        1 - 1 / words
    )


def test_a_training_file_of_one_tag_is_refused(tmp_path):
    (tmp_path / "train.txt").write_text("Paris O\nis O\n\nnice O\n")
    options = FineTuningOptions(
        data_dir=str(tmp_path), vocab_file=fixture_vocab(tmp_path), output_dir=str(tmp_path / "out")
    )
    with pytest.raises(
        conll.ConllError,
        match=f"^{tmp_path}/train.txt: every word has the tag 'O'; "
        "tagging needs at least two tags$",
    ):
        TaggingTask(options, BertTokenizer(options.vocab_file)).label_list


def test_learns_the_fixture_and_writes_conll_predictions(tmp_path):
    out = tmp_path / "out"
    result = run_script(
        "run_ner.py",
        f"--data_dir={FIXTURES}",
        *model_flags(tmp_path),
        f"--output_dir={out}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        "--train_batch_size=16",
        "--learning_rate=3e-3",
        "--num_train_epochs=5",
        "--eval_batch_size=32",
        "--predict_batch_size=32",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"^Fine-tuning on \d+ windows from \d+ examples: ", result.stdout, re.M), (
        result.stdout
    )
    results = {
        k: float(v)
        for k, v in (
            line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()
        )
    }
    assert set(results) == {"accuracy", "precision", "recall", "f1"}
    assert results["f1"] >= 0.6, results  # predicting the majority tag O scores entity F1 0
    # test.txt holds a sentence of 126 words, several
    # windows of 32: every word comes back once, in order.
    test = conll.read_conll(FIXTURES / "test.txt")
    assert max(len(s.words) for s in test) > 100
    blocks = (out / "test_predictions.txt").read_text().split("\n\n")
    rows = [[line.split(" ") for line in block.splitlines()] for block in blocks]
    assert [[r[0] for r in s] for s in rows] == [list(s.words) for s in test]
    assert [[r[1] for r in s] for s in rows] == [list(s.labels) for s in test]
    assert all(len(r) == 3 for s in rows for r in s)
    predicted = [[r[2] for r in s] for s in rows]
    assert {tag for s in predicted for tag in s} <= set(
        conll.label_list(conll.read_conll(FIXTURES / "train.txt"))
    )
    test_scores = tagging_metrics.tagging_scores([list(s.labels) for s in test], predicted, "BIO")
    assert test_scores["f1"] >= 0.6, test_scores

    # Text without tags, and no training file: the checkpoint's saved tags name the predictions.
    untagged = tmp_path / "untagged"
    untagged.mkdir()
    (untagged / "test.txt").write_text("\n\n".join("\n".join(s.words) for s in test) + "\n")
    result = run_script(
        "run_ner.py",
        f"--data_dir={untagged}",
        *model_flags(tmp_path),
        f"--output_dir={out}",
        "--do_predict",
        "--predict_batch_size=32",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    blocks = (out / "test_predictions.txt").read_text().split("\n\n")
    assert [[line.split(" ") for line in block.splitlines()] for block in blocks] == [
        [[word, tag] for word, tag in zip(s.words, tags)] for s, tags in zip(test, predicted)
    ]


def test_bad_line_exits_with_one_line_error(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(FIXTURES, data)
    lines = (data / "train.txt").read_text().splitlines()
    bad = next(i for i, line in enumerate(lines) if len(line.split()) == 4 and i > 20)
    lines[bad] = " ".join(lines[bad].split()[::3])  # `word tag` amid `word POS chunk tag` lines
    (data / "train.txt").write_text("\n".join(lines) + "\n")
    result = run_script(
        "run_ner.py",
        f"--data_dir={data}",
        *model_flags(tmp_path),
        f"--output_dir={tmp_path / 'out'}",
        "--do_train",
    )
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("run_ner.py:")]
    assert errors == [
        f"run_ner.py: error: {data / 'train.txt'}:{bad + 1}: 2 columns where the file's "
        "first line has 4"
    ], result.stderr[-2000:]
    assert not (tmp_path / "out").exists()  # the data is checked before anything is written


CHINESE = REPO / "tests" / "fixtures" / "chinese"


@pytest.mark.parametrize("fixture, main_metric", [("ner.txt", "f1"), ("segmentation.txt", "f1")])
def test_chinese_one_character_a_line(tmp_path, fixture, main_metric):
    """MSRA-style NER (`char<TAB>tag`, BIO) and B/M/E/S word segmentation (`char tag`): one word a
    character, each read from its own token; segmentation scores the words of the spans."""
    data = tmp_path / "data"
    data.mkdir()
    for name in ("train", "test"):
        shutil.copy(CHINESE / fixture, data / f"{name}.txt")
    options = FineTuningOptions(
        data_dir=str(data),
        vocab_file=str(CHINESE / "vocab.txt"),
        output_dir=str(tmp_path / "out"),
        max_seq_length=16,
    )
    task = TaggingTask(options, BertTokenizer(options.vocab_file))
    assert task.main_metric == main_metric
    encoded = task.encode("test")
    sentences = encoded.metadata.sentences
    assert all(len(w) == 1 for s in sentences for w in s.words if not w.isascii())
    labels, classes = encoded.labels["logits"], len(task.label_list)
    logits = np.eye(classes, dtype="float32")[
        np.where(encoded.metadata.best, labels, (labels + 1) % classes)
    ]
    assert task.evaluate("test", encoded, {"logits": logits})["f1"] == 1.0
    # 南京市 read as 南京|市: 2 predicted words, 1 gold word wrong
    if fixture == "segmentation.txt":
        assert task.label_list == ["B", "E", "M", "S"] and sentences[0].words[:3] == (
            "南",
            "京",
            "市",
        )
        row, position = map(int, np.argwhere(encoded.metadata.best)[1])  # 京: M -> E
        logits[row, position] = np.eye(classes)[task.label_list.index("E")]
        words = sum(len(tagging_metrics.word_spans(s.labels)) for s in sentences)
        right = words - 1
        precision, recall = right / (words + 1), right / words
        assert task.evaluate("test", encoded, {"logits": logits})["f1"] == pytest.approx(
            2 * precision * recall / (precision + recall)
        )
