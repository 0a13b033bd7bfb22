"""`FineTuningTask`: what each fine-tuning task provides to the shared driver."""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any

import keras
import numpy as np
from absl import logging

from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.tokenization import BertTokenizer


@dataclasses.dataclass
class EncodedSplit:
    """One split of a task's data, encoded for the model.

    Attributes:
        features: the model's inputs, int32 arrays such as `input_word_ids` `[n, seq]`.
        labels: the loss's targets (an array, or a dict keyed by output name); None if
            the split has no labels (a test set).
        sample_weight: loss weights, per example `[n]` or per token `[n, seq]`.
        metadata: whatever the task needs to turn outputs back into predictions.
    """

    features: dict[str, np.ndarray]
    labels: np.ndarray | dict[str, np.ndarray] | None
    sample_weight: np.ndarray | None = None
    metadata: Any = None

    def __len__(self) -> int:
        return len(next(iter(self.features.values())))


class FineTuningTask(abc.ABC):
    """A task's data, head and metrics; `bert_tf.finetuning.run_finetuning` does the rest.

    Subclasses set `main_metric` (the eval metric that picks the best checkpoint,
    higher is better) and the split names, and implement the abstract methods.
    """

    main_metric: str
    eval_splits: tuple[str, ...] = ("dev",)
    predict_splits: tuple[str, ...] = ("test",)

    def __init__(self, options: FineTuningOptions, tokenizer: BertTokenizer):
        self.options = options
        self.tokenizer = tokenizer

    @abc.abstractmethod
    def build_model(self, encoder) -> keras.Model:
        """The task model (a `bert_tf.models.BertTaskModel`) on `encoder`."""

    @abc.abstractmethod
    def loss(self, label_smoothing: float = 0.0):
        """A Keras loss for `model.compile`, or a dict of them keyed by output name."""

    @abc.abstractmethod
    def encode(self, split: str) -> EncodedSplit:
        """Reads and encodes one split of `options.data_dir`."""

    @abc.abstractmethod
    def evaluate(self, split: str, encoded: EncodedSplit, outputs: dict[str, np.ndarray]) -> dict[str, float]:
        """The task's metrics for the model's `outputs` on `encoded`."""

    @abc.abstractmethod
    def write_predictions(self, split: str, encoded: EncodedSplit, outputs: dict[str, np.ndarray],
                          output_dir: str) -> list[str]:
        """Writes the predictions for a split; returns the paths written."""

    def load_head(self, model, heads: dict) -> None:
        """Takes a fine-tuned head found in `--init_checkpoint` (`LoadReport.heads`); none by default."""

    def export_options(self) -> dict:
        """Keyword arguments for `bert_tf.export.export_task_model` (labels, span settings)."""
        return {}


def assign_dense_head(layer: keras.layers.Dense, head: dict, name: str,
                      labels: Sequence[str] | None = None) -> bool:
    """Sets `layer` from a checkpoint's fine-tuned head `{"kernel": [hidden, k], "bias": [k]}`.

    For `FineTuningTask.load_head`. A head whose shapes do not fit (say a 3-way
    MNLI classifier for a 2-way task) is left out with a warning, and the layer
    keeps its fresh initialisation. Where the head names its classes (`"labels"`,
    a Hugging Face `id2label`) and `labels` gives the task's, in id order, the
    head's outputs are reordered to the task's ids (names compared ignoring case);
    a head for other classes is left out with a warning. Returns whether the head
    was assigned.
    """
    kernel, bias = np.asarray(head["kernel"]), np.asarray(head["bias"])
    wanted = (tuple(layer.kernel.shape), tuple(layer.bias.shape))
    if (kernel.shape, bias.shape) != wanted:
        logging.warning("--init_checkpoint: its %s has shapes %s and %s, this task needs %s and %s; "
                        "the %s starts fresh", name, kernel.shape, bias.shape, *wanted, name)
        return False
    if labels is not None and head.get("labels") is not None:
        order = label_order(head["labels"], labels)
        if order is None:
            logging.warning("--init_checkpoint: its %s predicts %s, this task %s; the %s starts fresh",
                            name, ", ".join(head["labels"]), ", ".join(labels), name)
            return False
        kernel, bias = kernel[:, order], bias[order]
    layer.set_weights([kernel, bias])
    logging.info("--init_checkpoint: loaded its %s (%d outputs)", name, bias.shape[0])
    return True


def label_order(head_labels: Sequence[str], labels: Sequence[str]) -> list[int] | None:
    """For each of `labels`, the index of the same name (ignoring case) in `head_labels`;
    None unless the two name the same classes.

    >>> label_order(["NEGATIVE", "POSITIVE"], ["positive", "negative"])
    [1, 0]
    """
    theirs, ours = [label.casefold() for label in head_labels], [label.casefold() for label in labels]
    if sorted(theirs) != sorted(ours) or len(set(theirs)) != len(theirs):
        return None
    return [theirs.index(label) for label in ours]
