"""Each GLUE task's official metrics (also XNLI's, the csv/tsv task's), via scikit-learn and scipy.

Example:
>>> classification_metrics("mrpc", labels=[1, 0, 1, 1], predictions=[1, 0, 0, 1])
{'accuracy': 0.75, 'f1': 0.8}
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from sklearn import metrics


def _correlation(function):
    def correlation(labels, predictions) -> float:
        # Constant predictions (an untrained regressor) leave it undefined: report 0, as
        # scikit-learn does for Matthews correlation, so that a best-checkpoint comparison works.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            value = function(labels, predictions)[0]
        return 0.0 if np.isnan(value) else float(value)

    return correlation


METRICS = {
    "accuracy": metrics.accuracy_score,
    "f1": lambda labels, predictions: metrics.f1_score(labels, predictions, zero_division=0.0),
    "macro_f1": lambda labels, predictions: metrics.f1_score(
        labels, predictions, average="macro", zero_division=0.0
    ),
    "matthews_corrcoef": metrics.matthews_corrcoef,
    "pearson": _correlation(stats.pearsonr),
    "spearman": _correlation(stats.spearmanr),
}

# Task (normalized name, see `bert_tf.data.glue.normalize_task_name`) -> its metrics; the
# first is the one that picks the best checkpoint (the GLUE paper's headline number).
TASK_METRICS = {
    "cola": ("matthews_corrcoef",),
    "sst2": ("accuracy",),
    "mrpc": ("f1", "accuracy"),
    "stsb": ("spearman", "pearson"),
    "qqp": ("f1", "accuracy"),
    "mnli": ("accuracy",),
    "qnli": ("accuracy",),
    "rte": ("accuracy",),
    "wnli": ("accuracy",),
    "xnli": ("accuracy",),
    "csv": ("accuracy", "macro_f1"),
    "tsv": ("accuracy", "macro_f1"),
}


def main_metric(task: str) -> str:
    """The metric that ranks checkpoints, e.g. `matthews_corrcoef` for CoLA."""
    return TASK_METRICS[task][0]


def classification_metrics(task: str, labels, predictions) -> dict[str, float]:
    """`{metric: value}` of `task`'s metrics, in alphabetical order.

    `labels` and `predictions` are `[n]`: class ids, or scores for STS-B. F1 is
    that of class 1 (MRPC's paraphrase, QQP's duplicate).
    """
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return {name: float(METRICS[name](labels, predictions)) for name in sorted(TASK_METRICS[task])}
