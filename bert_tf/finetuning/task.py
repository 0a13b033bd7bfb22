"""`FineTuningTask`: what each fine-tuning task provides to the shared driver."""

from __future__ import annotations

import abc
import dataclasses
import json
import os
from collections.abc import Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import CheckpointFormat, LoadReport
from bert_tf.checkpoints.bert_tf_checkpoint import layer_weights
from bert_tf.checkpoints.tf_checkpoint_reader import ObjectGraph, encoder_paths, open_reader
from bert_tf.finetuning.best_checkpoint import saved_labels
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.models import BertClassifier, BertMultipleChoice, BertSpanLabeler, BertTokenClassifier
from bert_tf.tokenization import BertTokenizer

# By model type: the task model and its head layer's attribute (a bert_tf checkpoint's `model/<attribute>`).
TASK_MODELS = {"classifier": (BertClassifier, "classifier"), "token": (BertTokenClassifier, "token_classifier"),
               "span": (BertSpanLabeler, "span_classifier"),
               "multiple_choice": (BertMultipleChoice, "choice_scorer")}
# What each model type's head is called in the formats, for the errors naming a missing head.
HEAD_NAMES = {"classifier": "output_weights, Hugging Face classifier or a bert_tf classifier",
              "token": "Hugging Face BertForTokenClassification or a bert_tf token classifier",
              "span": "cls/squad/..., Hugging Face qa_outputs or a bert_tf span model",
              "multiple_choice": "a bert_tf multiple-choice model"}


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

    def load_head(self, model, heads: dict) -> str | None:
        """Sets the task model's head from a checkpoint's fine-tuned heads (`named_checkpoint_heads`).

        The head of `model`'s type (`TASK_MODELS`) is taken if its shapes fit and, where
        it names its classes (Hugging Face, bert_tf), they are the task's (`export_options`'
        labels; its outputs are then reordered to the task's ids, names compared ignoring
        case). Returns None if it was taken, else why not: the head is missing or does not fit.
        """
        return load_task_head(model, heads, self.export_options().get("labels"))

    def export_options(self) -> dict:
        """Keyword arguments for `bert_tf.export.export_task_model` (labels, span settings)."""
        return {}


def task_model_type(model: keras.Model) -> str | None:
    """The `TASK_MODELS` type of a task model, or None for another model."""
    return next((name for name, (model_class, _) in TASK_MODELS.items() if isinstance(model, model_class)), None)


def checkpoint_heads(report: LoadReport) -> dict[str, dict]:
    """The fine-tuned heads in the checkpoint `report` describes, by model type (`TASK_MODELS`).

    Each is `{"kernel": [hidden, k], "bias": [k]}` (no bias for multiple choice), with
    `"labels"` where the checkpoint names its classes. google-research/bert's
    `output_weights` is a classifier head and `cls/squad/...` a span head; a Hugging Face
    `classifier` is a token head if its config.json says BertForTokenClassification, else
    a classifier head; a bert_tf task model (checkpoint or `.keras` file) has its own head.
    """
    if report.format in (CheckpointFormat.BERT_TF.value, CheckpointFormat.KERAS.value):
        return _bert_tf_heads(report)
    heads = {"span": report.heads["squad"]} if "squad" in report.heads else {}
    if "classifier" in report.heads:
        heads["token" if _is_hugging_face_tagger(report) else "classifier"] = report.heads["classifier"]
    return heads


def named_checkpoint_heads(report: LoadReport) -> dict[str, dict]:
    """`checkpoint_heads`, with the class names a bert_tf fine-tuned checkpoint saved
    (`labels.json`) as its heads' `"labels"`: a task training on from it keeps the head only
    for the same classes. (An export may rename them instead: `export_model.py --labels`.)"""
    heads = checkpoint_heads(report)
    labels = saved_labels(report.path)  # None for other formats
    return {name: {**head, "labels": labels} for name, head in heads.items()} if labels else heads


def _bert_tf_heads(report: LoadReport) -> dict[str, dict]:
    """The head layer's weights, by name (`kernel`, `bias`), of the bert_tf task model saved at
    `report.path`, keyed by its model type; empty for an encoder or a pretrainer."""
    if report.format == CheckpointFormat.KERAS.value:
        saved = keras.saving.load_model(report.path, compile=False)
        return {name: {v.name: v.numpy() for v in getattr(saved, layer).weights}
                for name, (model_class, layer) in TASK_MODELS.items() if type(saved) is model_class}
    reader = open_reader(report.path)
    graph = ObjectGraph(reader)
    part = encoder_paths(graph)[0]
    heads = {name: layer_weights(reader, report.path, graph, f"{part}/{layer}")
             for name, (_, layer) in TASK_MODELS.items()}
    return {name: head for name, head in heads.items() if head}


def _is_hugging_face_tagger(report: LoadReport) -> bool:
    """Whether the checkpoint's Hugging Face config.json names BertForTokenClassification."""
    path = os.path.join(os.path.dirname(report.path), "config.json")
    hugging_face = (CheckpointFormat.SAFETENSORS.value, CheckpointFormat.PYTORCH.value)
    if report.format not in hugging_face or not tf.io.gfile.exists(path):
        return False
    with tf.io.gfile.GFile(path) as f:
        return "BertForTokenClassification" in (json.load(f).get("architectures") or [])


def missing_head(name: str) -> str:
    """The phrase for a checkpoint without a head of model type `name`."""
    return f"no {name} head ({HEAD_NAMES[name]})"


def load_task_head(model: keras.Model, heads: dict, labels: Sequence[str] | None = None) -> str | None:
    """Sets the head layer of `model` (a `TASK_MODELS` model) from `heads[<its type>]`.

    `heads` are a checkpoint's, by model type (`checkpoint_heads`). Where the head names
    its classes and `labels` gives the task's, in id order, the head's outputs are
    reordered to the task's ids. Returns None if the head was set, else why not (for a
    log line or an error): no such head, shapes that do not fit (say a 3-way MNLI
    classifier for a 2-way task), or other classes. The layer then keeps its weights.
    """
    name = task_model_type(model)
    if name is None:
        return f"a {type(model).__name__} has no head that checkpoints hold"
    if name not in heads:
        return missing_head(name)
    layer = getattr(model, TASK_MODELS[name][1])
    head = heads[name]
    weights = [np.asarray(head["kernel"])] + ([np.asarray(head["bias"])] if layer.use_bias else [])
    shapes, wanted = [w.shape for w in weights], [tuple(v.shape) for v in layer.weights]
    if shapes != wanted:
        return f"its {name} head has shapes {shapes}, this task needs {wanted}"
    if labels is not None and head.get("labels") is not None:
        order = label_order(head["labels"], labels)
        if order is None:
            return f"its {name} head predicts {', '.join(head['labels'])}, this task {', '.join(labels)}"
        weights = [w[..., order] for w in weights]
    layer.set_weights(weights)
    logging.info("--init_checkpoint: loaded its %s head (%d outputs)", name, weights[0].shape[-1])
    return None


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
