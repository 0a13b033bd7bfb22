"""GLUE metrics against values worked out by hand."""

import math

import pytest

from bert_tf.metrics.classification_metrics import TASK_METRICS, classification_metrics, main_metric

# A 2x2 table: TP = 3, FN = 2, FP = 1, TN = 2.
LABELS = [1, 1, 1, 1, 1, 0, 0, 0]
PREDICTIONS = [1, 1, 1, 0, 0, 1, 0, 0]


def test_matthews_correlation_on_a_2x2_table():
    tp, fn, fp, tn = 3, 2, 1, 2
    # 4 / sqrt(240)
    mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert classification_metrics("cola", LABELS, PREDICTIONS) == {
        "matthews_corrcoef": pytest.approx(mcc)
    }
    assert mcc == pytest.approx(0.2581989)
    # Constant predictions carry no information.
    assert classification_metrics("cola", LABELS, [1] * 8) == {"matthews_corrcoef": 0.0}


@pytest.mark.parametrize("task", ["mrpc", "qqp"])
def test_f1_of_the_positive_class_and_accuracy(task):
    precision, recall = 3 / 4, 3 / 5
    assert classification_metrics(task, LABELS, PREDICTIONS) == {
        "accuracy": pytest.approx(5 / 8),
        "f1": pytest.approx(2 * precision * recall / (precision + recall)),
    }
    assert classification_metrics(task, LABELS, [0] * 8) == {"accuracy": 3 / 8, "f1": 0.0}


def test_pearson_and_spearman():
    # x = [1, 2, 3], y = [10, 40, 20]: deviations [-1, 0, 1] and [-40/3, 50/3, -10/3];
    # Pearson = 10 / sqrt(2 * 4200 / 9) = 3 / sqrt(84); ranks of y are [1, 3, 2], Spearman = 0.5.
    assert classification_metrics("stsb", [1.0, 2.0, 3.0], [10.0, 40.0, 20.0]) == {
        "pearson": pytest.approx(3 / math.sqrt(84)),
        "spearman": pytest.approx(0.5),
    }
    assert classification_metrics("stsb", [1.0, 2.0, 3.0], [2.5, 2.5, 2.5]) == {
        "pearson": 0.0,
        "spearman": 0.0,
    }


@pytest.mark.parametrize("task", ["sst2", "mnli", "qnli", "rte", "wnli", "xnli"])
def test_accuracy_tasks(task):
    assert classification_metrics(task, [0, 1, 2, 1], [0, 1, 1, 1]) == {"accuracy": 0.75}


@pytest.mark.parametrize("task", ["csv", "tsv"])
def test_users_task_accuracy_and_macro_f1(task):
    # Per-class F1: class 0 = 1, class 1 (never predicted) = 0, class 2 (P 2/3, R 1) = 0.8.
    assert classification_metrics(task, [0, 1, 2, 2], [0, 2, 2, 2]) == {
        "accuracy": 0.75,
        "macro_f1": pytest.approx((1 + 0 + 0.8) / 3),
    }


def test_main_metric_is_each_tasks_headline_number():
    assert {task: main_metric(task) for task in TASK_METRICS} == {
        "cola": "matthews_corrcoef",
        "sst2": "accuracy",
        "mrpc": "f1",
        "stsb": "spearman",
        "qqp": "f1",
        "mnli": "accuracy",
        "qnli": "accuracy",
        "rte": "accuracy",
        "wnli": "accuracy",
        "xnli": "accuracy",
        "csv": "accuracy",
        "tsv": "accuracy",
    }
