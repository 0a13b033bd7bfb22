"""Fine-tuned checkpoints keep their class names (`best/labels.json`): eval/predict-only runs and
export_model.py take them from there, and a training file with other labels is refused."""

import csv
import json
import logging
import pathlib
import re

import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF Text ops the export uses)

from bert_test_utils import REPO, run_script, write_tiny_config, write_word_vocab
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.tokenization import BertTokenizer

CONLL = REPO / "tests" / "fixtures" / "conll"
REVIEWS = {"neg": ["a dull film", "a poor plot"], "pos": ["a lovely film", "a superb plot"]}


def write_csv(path, rows, header=("text", "label")) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])


def labeled_reviews(names=("neg", "pos"), n=16):
    """`n` (text, label) rows alternating between the two classes, labelled `names`."""
    return [
        (REVIEWS[label][i % 2], name) for i in range(n // 2) for label, name in zip(REVIEWS, names)
    ]


def csv_options(data_dir, vocab, output_dir, **overrides) -> FineTuningOptions:
    values = dict(
        data_dir=str(data_dir),
        vocab_file=vocab,
        output_dir=str(output_dir),
        max_seq_length=8,
        train_batch_size=8,
        eval_batch_size=8,
        predict_batch_size=8,
        num_train_epochs=1,
        verbose=0,
    )
    return FineTuningOptions(**{**values, **overrides})


def csv_task(options) -> SentencePredictionTask:
    return SentencePredictionTask(options, BertTokenizer(options.vocab_file), "csv")


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    """A csv classifier fine-tuned, evaluated each epoch (BestCheckpoint); (vocab, output_dir)."""
    root = tmp_path_factory.mktemp("csv")
    vocab = write_word_vocab(
        root / "vocab.txt", [text for texts in REVIEWS.values() for text in texts]
    )
    vocab_size = len(pathlib.Path(vocab).read_text().splitlines())
    write_csv(root / "data" / "train.csv", labeled_reviews())
    write_csv(root / "data" / "dev.csv", labeled_reviews(n=8))
    options = csv_options(
        root / "data",
        vocab,
        root / "out",
        do_train=True,
        do_eval=True,
        bert_config_file=write_tiny_config(root, vocab_size=vocab_size),
    )
    run_finetuning(csv_task(options), options)
    return vocab, root / "out"


def test_the_best_checkpoint_keeps_the_label_names(csv_run):
    _, out = csv_run
    assert json.loads((out / "best" / "labels.json").read_text()) == ["neg", "pos"]


@pytest.mark.parametrize("from_init_checkpoint", [True, False])
def test_predicts_from_a_data_dir_without_a_training_file(csv_run, tmp_path, from_init_checkpoint):
    vocab, out = csv_run
    write_csv(
        tmp_path / "data" / "test.csv", [(text,) for text in REVIEWS["pos"]], header=("text",)
    )
    restore = (
        dict(init_checkpoint=str(out / "best"), output_dir=str(tmp_path / "out"))
        if from_init_checkpoint
        else dict(output_dir=str(out))  # output_dir/best
    )
    options = csv_options(tmp_path / "data", vocab, do_predict=True, **restore)
    run_finetuning(csv_task(options), options)
    header = (pathlib.Path(options.output_dir) / "test_results.tsv").read_text().splitlines()[0]
    assert header.split("\t") == ["index", "prediction", "probability_neg", "probability_pos"]


def test_a_training_file_with_other_labels_is_refused(csv_run, tmp_path):
    vocab, out = csv_run
    write_csv(tmp_path / "same" / "train.csv", labeled_reviews())
    write_csv(tmp_path / "same" / "dev.csv", labeled_reviews(n=8))
    options = csv_options(
        tmp_path / "same",
        vocab,
        tmp_path / "out",
        init_checkpoint=str(out / "best" / "ckpt"),
        do_eval=True,
    )
    assert set(run_finetuning(csv_task(options), options)) == {"accuracy", "macro_f1"}

    # two labels too
    write_csv(tmp_path / "other" / "train.csv", labeled_reviews(names=("bad", "good")))
    write_csv(tmp_path / "other" / "dev.csv", labeled_reviews(names=("bad", "good"), n=8))
    options = csv_options(
        tmp_path / "other",
        vocab,
        tmp_path / "out",
        init_checkpoint=str(out / "best" / "ckpt"),
        do_eval=True,
    )
    message = (
        f"{tmp_path}/other/train.csv has the labels bad, good, but the checkpoint was fine-tuned "
        f"on neg, pos ({out}/best/ckpt)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run_finetuning(csv_task(options), options)


@pytest.mark.parametrize(
    "names, expected",
    [
        (("neg", "pos"), "--init_checkpoint: loaded its classifier head"),
        (
            ("bad", "good"),
            "--init_checkpoint: its classifier head predicts neg, pos, not bad, good; "
            "the head starts fresh",
        ),
    ],
)
def test_training_on_from_a_checkpoint_keeps_its_head_only_for_the_same_labels(
    csv_run, tmp_path, caplog, names, expected
):
    """Two classes of other names fit the head's shape, but it would map them onto neg and pos."""
    vocab, out = csv_run
    write_csv(tmp_path / "data" / "train.csv", labeled_reviews(names=names))
    options = csv_options(
        tmp_path / "data",
        vocab,
        tmp_path / "out",
        init_checkpoint=str(out / "best" / "ckpt"),
        do_train=True,
    )
    with caplog.at_level(logging.INFO, logger="absl"):
        run_finetuning(csv_task(options), options)
    assert expected in caplog.messages


def test_a_ner_checkpoint_exports_and_predicts_with_its_tag_names(tmp_path):
    words = [
        line.split()[0]
        for name in ("train", "test")
        for line in (CONLL / f"{name}.txt").read_text().splitlines()
        if line.strip()
    ]
    vocab = write_word_vocab(tmp_path / "vocab.txt", [" ".join(words)])
    config = write_tiny_config(
        tmp_path, vocab_size=len(pathlib.Path(vocab).read_text().splitlines())
    )
    # no --do_eval: the last epoch is saved
    options = FineTuningOptions(
        data_dir=str(CONLL),
        vocab_file=vocab,
        output_dir=str(tmp_path / "ner"),
        bert_config_file=config,
        do_train=True,
        max_seq_length=32,
        train_batch_size=16,
        num_train_epochs=1,
        verbose=0,
    )
    tags = TaggingTask(options, BertTokenizer(vocab)).label_list
    run_finetuning(TaggingTask(options, BertTokenizer(vocab)), options)
    assert json.loads((tmp_path / "ner" / "best" / "labels.json").read_text()) == tags

    result = run_script(
        "export_model.py",
        "--model_type=token",
        f"--init_checkpoint={tmp_path / 'ner' / 'best' / 'ckpt'}",
        f"--vocab_file={vocab}",
        "--max_seq_length=32",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    text = tf.saved_model.load(str(tmp_path / "export")).signatures["text"]
    labels = text(text=tf.constant(["Frank joined Acme Corp last year"]))["labels"].numpy()[0]
    assert len(labels) == 6 and {label.decode() for label in labels} <= set(tags)

    # Tagging a folder that holds only test.txt, with the tags saved beside the checkpoint.
    (tmp_path / "test_only").mkdir()
    (tmp_path / "test_only" / "test.txt").write_text((CONLL / "test.txt").read_text())
    options = FineTuningOptions(
        data_dir=str(tmp_path / "test_only"),
        vocab_file=vocab,
        output_dir=str(tmp_path / "ner"),
        do_predict=True,
        max_seq_length=32,
        verbose=0,
    )
    run_finetuning(TaggingTask(options, BertTokenizer(vocab)), options)
    assert (tmp_path / "ner" / "test_predictions.txt").read_text().strip()
