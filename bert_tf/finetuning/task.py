"""`FineTuningTask`: what each fine-tuning task provides to the shared driver."""

from __future__ import annotations

import abc
import dataclasses
import functools
import hashlib
from typing import Any

import keras
import numpy as np

from bert_tf.checkpoints.starting_checkpoint import StartingCheckpoint, resolve_init_checkpoint
from bert_tf.checkpoints.task_heads import load_task_head
from bert_tf.finetuning.best_checkpoint import starting_checkpoint_path
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
        num_examples: where the rows are windows of longer examples (SQuAD, NER), how many
            examples they come from; None when each row is one example.
    """

    features: dict[str, np.ndarray]
    labels: np.ndarray | dict[str, np.ndarray] | None
    sample_weight: np.ndarray | None = None
    metadata: Any = None
    num_examples: int | None = None

    def __len__(self) -> int:
        """The rows: examples, or windows of them."""
        return len(next(iter(self.features.values())))

    def digest(self) -> str:
        """A short hash of the rows, labels and loss weights.

        Returns:
            16 hex digits, equal only for equal encoded data.
        """
        digest = hashlib.sha256()
        for name, array in sorted(_named_arrays(self.features, self.labels, self.sample_weight)):
            array = np.ascontiguousarray(array)
            digest.update(f"{name} {array.dtype.str} {array.shape}".encode())
            digest.update(array.tobytes())
        return digest.hexdigest()[:16]

    def size_text(self) -> str:
        """What the rows are, for messages.

        Returns:
            `"160 examples"`, or `"38 windows from 22 examples"` where rows are windows.
        """
        if self.num_examples is None:
            return f"{len(self):,} examples"
        return f"{len(self):,} windows from {self.num_examples:,} examples"


def _named_arrays(features, labels, sample_weight):
    yield from ((f"features/{name}", array) for name, array in features.items())
    if isinstance(labels, dict):
        yield from ((f"labels/{name}", array) for name, array in labels.items())
    elif labels is not None:
        yield "labels", labels
    if sample_weight is not None:
        yield "sample_weight", sample_weight


class FineTuningTask(abc.ABC):
    """A task's data, head and metrics; `bert_tf.finetuning.run_finetuning` does the rest.

    Subclasses set `main_metric` (the eval metric that picks the best checkpoint,
    higher is better) and the split names, and implement the abstract methods.

    Args:
        options: the run's settings.
        tokenizer: the tokenizer of `options.vocab_file`.
    """

    main_metric: str
    eval_splits: tuple[str, ...] = ("dev",)
    predict_splits: tuple[str, ...] = ("test",)

    def __init__(self, options: FineTuningOptions, tokenizer: BertTokenizer):
        self.options = options
        self.tokenizer = tokenizer

    @functools.cached_property
    def starting_checkpoint(self) -> StartingCheckpoint | None:
        """The checkpoint the run starts from (`starting_checkpoint_path`), resolved once: the
        driver takes its config and weights, the task its class names. None without one."""
        return resolve_init_checkpoint(starting_checkpoint_path(self.options))

    @abc.abstractmethod
    def build_model(self, encoder) -> keras.Model:
        """Builds the task model.

        Args:
            encoder: the `BertEncoder` the model is built on.

        Returns:
            The task model, a `bert_tf.models.BertTaskModel`.
        """

    @abc.abstractmethod
    def loss(self, label_smoothing: float = 0.0):
        """The training loss.

        Args:
            label_smoothing: the classification losses' label smoothing.

        Returns:
            A Keras loss for `model.compile`, or a dict of them keyed by output name.
        """

    @abc.abstractmethod
    def encode(self, split: str) -> EncodedSplit:
        """Reads and encodes one split of `options.data_dir`.

        Args:
            split: the split's name, such as "train" or one of `eval_splits`.

        Returns:
            The encoded split.
        """

    @abc.abstractmethod
    def evaluate(
        self, split: str, encoded: EncodedSplit, outputs: dict[str, np.ndarray]
    ) -> dict[str, float]:
        """Scores the model on a split.

        Args:
            split: the split's name.
            encoded: the split, as `encode` returned it.
            outputs: the model's outputs on `encoded.features`, by output name.

        Returns:
            The task's metrics by name; `main_metric` among them.
        """

    @abc.abstractmethod
    def write_predictions(
        self, split: str, encoded: EncodedSplit, outputs: dict[str, np.ndarray], output_dir: str
    ) -> list[str]:
        """Writes the predictions for a split.

        Args:
            split: the split's name.
            encoded: the split, as `encode` returned it.
            outputs: the model's outputs on `encoded.features`, by output name.
            output_dir: the directory to write them in.

        Returns:
            The paths written.
        """

    def load_head(self, model, heads: dict) -> str | None:
        """Sets the task model's head from a checkpoint's fine-tuned heads.

        The head of `model`'s type is taken if its shapes fit and, where it names its classes
        (Hugging Face, bert_tf), they are the task's (`export_options`' labels; its outputs are
        then reordered to the task's ids, names compared ignoring case).

        Args:
            model: the task model, built.
            heads: the checkpoint's heads by model type (`checkpoint_heads`).

        Returns:
            None if the head was taken, else why not: it is missing or does not fit.
        """
        return load_task_head(model, heads, self.export_options().get("labels"))

    def export_options(self) -> dict:
        """The task's export settings.

        Returns:
            Keyword arguments for `bert_tf.export.export_task_model` (labels, span settings).
        """
        return {}
