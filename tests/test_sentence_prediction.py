"""SentencePredictionTask: the csv task through the driver,
XNLI from flags, losses, predictions files, head loading."""

import csv
import math
import pathlib

import keras
import numpy as np
import pytest
import scipy.special
from absl import flags

from bert_test_utils import tiny_encoder, write_tiny_config, write_word_vocab
from bert_tf.data import glue
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.tasks.cli import build_classifier_task
from bert_tf.tasks.flags import define_classifier_flags
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tokenization import BertTokenizer
from test_glue_data import write_xnli
from test_run_classifier import FILLER, NEGATIVE, POSITIVE, sentiment_examples

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "glue"


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    texts = POSITIVE + NEGATIVE + FILLER + [",", "the fence is red. we thank you"]
    return write_word_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt", texts)


def task_for(task_name, data_dir, vocab, output_dir="unused", **kwargs):
    options = FineTuningOptions(
        data_dir=str(data_dir), vocab_file=vocab, output_dir=str(output_dir), max_seq_length=16
    )
    return SentencePredictionTask(options, BertTokenizer(vocab), task_name, **kwargs)


def test_csv_task_trains_through_the_driver(tmp_path, vocab):
    """`--task_name=csv`: string labels, a pair of named columns, test_results.tsv."""
    names = {0: "neg", 1: "pos"}
    for split, n, seed in (("train", 160, 3), ("dev", 32, 4), ("test", 16, 5)):
        with (tmp_path / f"{split}.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "title", "review"] + (["verdict"] if split != "test" else []))
            for i, (text, label) in enumerate(sentiment_examples(n, seed)):
                writer.writerow(
                    [i, "a film, really", text] + ([names[label]] if split != "test" else [])
                )
    vocab_size = len(pathlib.Path(vocab).read_text().splitlines())
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=vocab,
        bert_config_file=write_tiny_config(tmp_path, vocab_size=vocab_size),
        output_dir=str(tmp_path / "out"),
        do_train=True,
        do_eval=True,
        do_predict=True,
        max_seq_length=16,
        train_batch_size=8,
        eval_batch_size=16,
        predict_batch_size=16,
        learning_rate=1e-3,
        num_train_epochs=5,
        verbose=0,
    )
    task = SentencePredictionTask(
        options,
        BertTokenizer(vocab),
        "csv",
        text_a_column="review",
        text_b_column="title",
        label_column="verdict",
    )
    assert task.label_list == ("neg", "pos") and task.main_metric == "accuracy"
    assert task.export_options() == {"labels": ["neg", "pos"]}
    results = run_finetuning(task, options)
    assert set(results) == {"accuracy", "macro_f1"}
    assert results["accuracy"] >= 0.8, results  # chance is 0.5
    rows = list(csv.reader((tmp_path / "out" / "test_results.tsv").open(), delimiter="\t"))
    assert rows[0] == ["index", "prediction", "probability_neg", "probability_pos"]
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(16)]
    for row in rows[1:]:
        probabilities = [float(p) for p in row[2:]]
        assert abs(sum(probabilities) - 1) < 1e-5
        assert row[1] == ("pos" if probabilities[1] > probabilities[0] else "neg")


def test_a_csv_training_file_of_one_label_is_refused(tmp_path, vocab):
    (tmp_path / "train.csv").write_text("text,label\na good film,pos\na fine film,pos\n")
    with pytest.raises(
        glue.DataError,
        match=f"^{tmp_path}/train.csv: every example has the label 'pos'; "
        "classification needs at least two labels$",
    ):
        task_for("csv", tmp_path, vocab).label_list


def test_cross_entropy_with_label_smoothing_and_squared_error(vocab):
    logits = np.array([[2.0, 0.0]], np.float32)
    log_p = [2 - math.log(math.exp(2) + 1), -math.log(math.exp(2) + 1)]  # log-softmax of [2, 0]
    loss = task_for("SST-2", FIXTURES / "SST-2", vocab).loss(label_smoothing=0.2)["logits"]
    # Smoothing 0.2 over 2 classes: targets [0.9, 0.1] for label 0.
    assert float(loss(np.array([0]), logits)) == pytest.approx(
        -(0.9 * log_p[0] + 0.1 * log_p[1]), rel=1e-5
    )
    unsmoothed = task_for("SST-2", FIXTURES / "SST-2", vocab).loss()["logits"]
    assert float(unsmoothed(np.array([1]), logits)) == pytest.approx(-log_p[1], rel=1e-5)
    regression = task_for("STS-B", FIXTURES / "STS-B", vocab)
    assert regression.num_classes == 1 and regression.main_metric == "spearman"
    # Through `compile`, as the driver uses it: scores [batch] against logits [batch, 1].
    logits_in = keras.Input((1,))
    model = keras.Model(logits_in, {"logits": logits_in})
    model.compile(loss=regression.loss())
    loss = model.evaluate(
        np.array([[1.5], [2.0]], np.float32),
        {"logits": np.array([1.0, 4.0], np.float32)},
        verbose=0,
    )
    assert loss == pytest.approx((0.25 + 4.0) / 2)  # each logit against its own score only
    with pytest.raises(
        ValueError, match="`label_smoothing` is for classification; stsb is a regression"
    ):
        regression.loss(label_smoothing=0.2)


def test_mnli_evaluates_both_dev_sets_and_writes_both_submissions(tmp_path, vocab):
    task = task_for("MNLI", FIXTURES / "MNLI", vocab)
    assert task.eval_splits == ("dev_matched", "dev_mismatched") and task.num_classes == 3
    dev = task.encode("dev_mismatched")  # gold labels: contradiction, neutral
    np.testing.assert_array_equal(dev.labels["logits"], [0, 2])
    logits = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 1.0]], np.float32)  # contradiction, entailment
    assert task.evaluate("dev_mismatched", dev, {"logits": logits}) == {"accuracy": 0.5}
    written = [
        task.write_predictions(
            split, task.encode(split), {"logits": logits[: len(task.encode(split))]}, str(tmp_path)
        )
        for split in task.predict_splits
    ]
    assert written == [
        [str(tmp_path / "test_matched_results.tsv"), str(tmp_path / "MNLI-m.tsv")],
        [str(tmp_path / "test_mismatched_results.tsv"), str(tmp_path / "MNLI-mm.tsv")],
    ]
    assert (tmp_path / "MNLI-m.tsv").read_text() == "index\tprediction\n0\tcontradiction\n"
    assert (
        tmp_path / "MNLI-mm.tsv"
    ).read_text() == "index\tprediction\n0\tcontradiction\n1\tentailment\n"
    # Every classification task also writes the csv/tsv
    # tasks' results file: row, label, probabilities.
    rows = [
        line.split("\t")
        for line in (tmp_path / "test_mismatched_results.tsv").read_text().splitlines()
    ]
    assert rows[0] == [
        "index",
        "prediction",
        "probability_contradiction",
        "probability_entailment",
        "probability_neutral",
    ]
    assert [row[:2] for row in rows[1:]] == [["0", "contradiction"], ["1", "entailment"]]
    np.testing.assert_allclose(
        [float(p) for p in rows[2][2:]], scipy.special.softmax(logits[1]), atol=1e-6
    )


def test_sts_b_submission_holds_scores(tmp_path, vocab):
    task = task_for("STS-B", FIXTURES / "STS-B", vocab)
    test = task.encode("test")
    assert test.labels is None and [e.guid for e in test.metadata] == ["0"]
    task.write_predictions(
        "test", test, {"logits": np.array([[3.14159]], np.float32)}, str(tmp_path)
    )
    assert (tmp_path / "STS-B.tsv").read_text() == "index\tprediction\n0\t3.142\n"
    assert (tmp_path / "test_results.tsv").read_text() == "index\tprediction\n0\t3.141590\n"


def test_load_head_assigns_a_fitting_tf1_classifier(vocab):
    task = task_for("RTE", FIXTURES / "RTE", vocab)
    model = task.build_model(tiny_encoder())
    model.build_with_dummy_inputs()
    kernel = np.random.default_rng(0).normal(size=(64, 2)).astype(np.float32)
    task.load_head(
        model, {"classifier": {"kernel": kernel, "bias": np.array([0.5, -0.5], np.float32)}}
    )
    np.testing.assert_array_equal(model.classifier.kernel.numpy(), kernel)
    np.testing.assert_array_equal(model.classifier.bias.numpy(), [0.5, -0.5])
    # A 3-way MNLI head does not fit a 2-way task: the classifier keeps its weights.
    mnli_head = {"kernel": np.zeros((64, 3), np.float32), "bias": np.zeros(3, np.float32)}
    task.load_head(model, {"classifier": mnli_head})
    np.testing.assert_array_equal(model.classifier.kernel.numpy(), kernel)
    task.load_head(model, {"squad": {"kernel": np.zeros((64, 2)), "bias": np.zeros(2)}})
    np.testing.assert_array_equal(model.classifier.bias.numpy(), [0.5, -0.5])


def test_task_name_is_required(vocab):
    with pytest.raises(ValueError, match="^`task_name` is required"):
        task_for("", FIXTURES / "SST-2", vocab)


@pytest.mark.parametrize("task_name", ["XNLI", "xnli"])
def test_xnli_task_builds_from_flags_and_predicts_on_its_test_file(tmp_path, vocab, task_name):
    flag_values = flags.FlagValues()
    define_classifier_flags(flag_values)
    flag_values(["run_classifier.py", f"--task_name={task_name}", "--xnli_language=de"])
    options = FineTuningOptions(
        data_dir=str(write_xnli(tmp_path)), vocab_file=vocab, output_dir="unused", max_seq_length=16
    )
    task = build_classifier_task(options, BertTokenizer(vocab), flag_values)
    assert task.processor == glue.XnliProcessor("de") and task.main_metric == "accuracy"
    assert task.label_list == ("contradiction", "entailment", "neutral") and task.num_classes == 3
    np.testing.assert_array_equal(task.encode("train").labels["logits"], [1, 0, 2])
    dev = task.encode("dev")  # the German rows: neutral, contradiction
    logits = np.array([[0.0, 1.0, 3.0], [0.0, 2.0, 1.0]], np.float32)  # neutral, entailment
    assert task.evaluate("dev", dev, {"logits": logits}) == {"accuracy": 0.5}
    test = task.encode("test")
    assert test.labels is None and len(test.metadata) == 1
    written = task.write_predictions("test", test, {"logits": logits[:1]}, str(tmp_path))
    assert written == [str(tmp_path / "test_results.tsv")]  # XNLI has no submission file
    assert (tmp_path / "test_results.tsv").read_text().splitlines()[1].split("\t")[:2] == [
        "0",
        "neutral",
    ]


def test_xnli_labels_are_fixed_against_a_checkpoint_fine_tuned_on_others(tmp_path, vocab):
    """An eval-only run needs no training file; a head of other class names is refused, as GLUE."""
    model = task_for("XNLI", tmp_path, vocab).build_model(tiny_encoder())
    model.build_with_dummy_inputs()
    save_model_checkpoint(model, str(tmp_path / "ckpt"), {}, labels=("yes", "maybe", "no"))
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=vocab,
        output_dir="unused",
        do_eval=True,
        init_checkpoint=str(tmp_path / "ckpt"),
    )
    with pytest.raises(
        ValueError,
        match="^`task_name`=XNLI has the labels contradiction, "
        "entailment, neutral, but the checkpoint was fine-tuned "
        "on yes, maybe, no",
    ):
        SentencePredictionTask(options, BertTokenizer(vocab), "xnli").label_list
