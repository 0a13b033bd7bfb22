"""run_multiple_choice.py end to end on a small learnable SWAG-format set, and on bad data."""

import csv
import pathlib

import numpy as np
import pytest

from bert_test_utils import run_script, script_failures, write_tiny_config, write_word_vocab
from bert_tf.data.swag import SwagError
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from bert_tf.tokenization import BertTokenizer

HEADER = [
    "",
    "video-id",
    "fold-ind",
    "startphrase",
    "sent1",
    "sent2",
    "gold-source",
    "ending0",
    "ending1",
    "ending2",
    "ending3",
    "label",
]
SUBJECTS = [
    "A man",
    "The woman",
    "A boy",
    "The girl",
    "Someone",
    "The chef",
    "A dancer",
    "The crowd",
]
PLACES = ["in the kitchen", "on a stage", "at the park", "by the river", "in a gym", "on the beach"]
VERBS = [
    "lifts the box",
    "opens the door",
    "paints the wall",
    "throws the ball",
    "cuts the bread",
    "turns around",
    "waves, then smiles",
    "picks up a cup",
]
# The right ending is the one done in a calm manner; the wrong ones are not.
CALM = ["carefully", "gently", "slowly", "patiently"]
WILD = ["angrily", "wildly", "badly", "clumsily", "loudly", "nervously"]


def swag_rows(count, seed, labelled=True):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        subject, place = rng.choice(SUBJECTS), rng.choice(PLACES)
        label = int(rng.integers(4))
        endings = [f"{rng.choice(VERBS)} {rng.choice(WILD)}." for _ in range(4)]
        endings[label] = f"{rng.choice(VERBS)} {rng.choice(CALM)}."
        row = [
            str(i),
            f"clip_{seed}_{i}",
            str(i % 7),
            f"{subject} is {place}. {subject}",
            f"{subject} is {place}.",
            subject,
            "gold",
            *endings,
        ]
        rows.append(row + [str(label)] if labelled else row)
    return rows


def write_csv(path, rows, labelled=True):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(HEADER if labelled else HEADER[:-1])
        writer.writerows(rows)


@pytest.fixture(scope="module")
def swag_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("swag")
    write_csv(directory / "train.csv", swag_rows(160, seed=1))
    write_csv(directory / "val.csv", swag_rows(64, seed=2))
    write_csv(directory / "test.csv", swag_rows(24, seed=3, labelled=False), labelled=False)
    texts = [
        (directory / f"{name}.csv").read_text(encoding="utf-8") for name in ("train", "val", "test")
    ]
    vocab = write_word_vocab(directory / "vocab.txt", texts)
    num_tokens = len(pathlib.Path(vocab).read_text(encoding="utf-8").split())
    config = write_tiny_config(directory, vocab_size=num_tokens)
    return directory, vocab, config


def test_learns_swag_and_writes_predictions(swag_dir, tmp_path):
    data_dir, vocab, config = swag_dir
    output_dir = tmp_path / "out"
    result = run_script(
        "run_multiple_choice.py",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        "--max_seq_length=24",
        "--train_batch_size=16",
        "--eval_batch_size=32",
        "--predict_batch_size=32",
        "--learning_rate=1e-3",
        "--num_train_epochs=1",
        "--label_smoothing=0.1",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = dict(
        line.split(" = ") for line in (output_dir / "eval_results.txt").read_text().splitlines()
    )
    assert float(results["accuracy"]) > 0.7, results  # chance is 0.25

    with open(output_dir / "test_predictions.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "prob0", "prob1", "prob2", "prob3", "label"]
    assert [row[0] for row in rows[1:]] == [str(i) for i in range(24)]
    probabilities = np.array([[float(p) for p in row[1:5]] for row in rows[1:]])
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    predicted = [int(row[5]) for row in rows[1:]]
    np.testing.assert_array_equal(
        probabilities[np.arange(24), predicted], probabilities.max(axis=1)
    )
    truth = [int(row[-1]) for row in swag_rows(24, seed=3)]  # the same rows, with their labels
    assert np.mean(np.array(predicted) == truth) > 0.6


def write_unlabelled(directory, labelled_train):
    """SWAG files without labels, but the train file's if `labelled_train`; returns `directory`."""
    directory.mkdir()
    write_csv(
        directory / "train.csv",
        swag_rows(20, seed=5, labelled=labelled_train),
        labelled=labelled_train,
    )
    for split in ("val", "test"):
        write_csv(directory / f"{split}.csv", swag_rows(8, seed=6, labelled=False), labelled=False)
    return directory


def test_bad_data_is_a_one_line_error(swag_dir, tmp_path):
    """A label out of range, and a val file without labels (the train and val files need them),
    each refused before anything is written."""
    _, vocab, config = swag_dir
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    rows = swag_rows(20, seed=4)
    rows[6][-1] = "4"
    write_csv(bad_dir / "train.csv", rows)
    unlabelled = write_unlabelled(tmp_path / "unlabelled", labelled_train=True)
    model = [
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={tmp_path / 'out'}",
        "--max_seq_length=24",
        "--do_train",
    ]
    cases = [
        ([f"--data_dir={bad_dir}", *model], f"{bad_dir / 'train.csv'}:8: label 4 is outside 0..3"),
        (
            [f"--data_dir={unlabelled}", *model, "--do_eval"],
            f"{unlabelled / 'val.csv'}: no 'label' column (the train and val files need one)",
        ),
    ]
    assert script_failures("run_multiple_choice.py", *(argv for argv, _ in cases)) == [
        (1, f"run_multiple_choice.py: error: {message}") for _, message in cases
    ]
    assert not (tmp_path / "out").exists()


def test_only_the_test_file_may_leave_out_labels(swag_dir, tmp_path):
    _, vocab, _ = swag_dir
    unlabelled = write_unlabelled(tmp_path / "unlabelled", labelled_train=False)
    options = FineTuningOptions(
        data_dir=str(unlabelled),
        vocab_file=vocab,
        output_dir=str(tmp_path / "out"),
        max_seq_length=24,
    )
    task = MultipleChoiceTask(options, BertTokenizer(vocab))
    with pytest.raises(SwagError, match=rf"^{unlabelled / 'train.csv'}: no 'label' column"):
        task.encode("train")
    test = task.encode("test")  # prediction needs no labels
    assert test.labels is None and test.features["input_word_ids"].shape == (8, 4, 24)
