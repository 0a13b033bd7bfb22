"""A checkpoint's fine-tuned heads by task model type, and setting a task model's head from them."""

from __future__ import annotations

from collections.abc import Sequence

import keras
import numpy as np

from bert_tf.checkpoints.bert_tf_checkpoint import HEAD_LAYERS, saved_heads
from bert_tf.checkpoints.formats import CheckpointFormat, hugging_face_config_file
from bert_tf.checkpoints.hugging_face_checkpoint import read_hugging_face_architectures
from bert_tf.checkpoints.loader import LoadReport
from bert_tf.models import BertClassifier, BertMultipleChoice, BertSpanLabeler, BertTokenClassifier

# By model type: the task model and its head layer's
# attribute (a bert_tf checkpoint's `model/<attribute>`).
TASK_MODELS = {
    "classifier": (BertClassifier, HEAD_LAYERS["classifier"]),
    "span": (BertSpanLabeler, HEAD_LAYERS["span"]),
    "token": (BertTokenClassifier, HEAD_LAYERS["token"]),
    "multiple_choice": (BertMultipleChoice, HEAD_LAYERS["multiple_choice"]),
}
# What each model type's head is called in the formats, for the errors naming a missing head.
HEAD_NAMES = {
    "classifier": "output_weights, Hugging Face classifier or a bert_tf classifier",
    "span": "cls/squad/..., Hugging Face qa_outputs or a bert_tf span model",
    "token": "Hugging Face BertForTokenClassification or a bert_tf token classifier",
    "multiple_choice": "Hugging Face BertForMultipleChoice or a bert_tf multiple-choice model",
}
# A Hugging Face `classifier` by the architecture its
# config.json names; any other is a sentence classifier.
_HUGGING_FACE_HEADS = {
    "BertForTokenClassification": "token",
    "BertForMultipleChoice": "multiple_choice",
}


def task_model_type(model: keras.Model) -> str | None:
    """The `TASK_MODELS` type of a task model, or None for another model."""
    return next(
        (name for name, (model_class, _) in TASK_MODELS.items() if isinstance(model, model_class)),
        None,
    )


def checkpoint_heads(report: LoadReport) -> dict[str, dict]:
    """The fine-tuned heads in the checkpoint `report` describes, by model type (`TASK_MODELS`).

    Each is `{"kernel": [hidden, k], "bias": [k]}` (no bias for multiple choice), with
    `"labels"` where the checkpoint names its classes (`report.labels`: a bert_tf
    fine-tuning run's `labels.json`, a Hugging Face `id2label`). google-research/bert's
    `output_weights` is a classifier head and `cls/squad/...` a span head; a Hugging Face
    `classifier` is a token or multiple-choice head if its config.json says
    BertForTokenClassification or BertForMultipleChoice, else a classifier head; a bert_tf
    task model (checkpoint or `.keras` file) has its own head.
    """
    if report.format in (CheckpointFormat.BERT_TF.value, CheckpointFormat.KERAS.value):
        heads = saved_heads(report.path, keras_file=report.format == CheckpointFormat.KERAS.value)
        labels = report.labels  # none for a `.keras` file
        return (
            {name: {**head, "labels": labels} for name, head in heads.items()} if labels else heads
        )
    heads = {"span": report.heads["squad"]} if "squad" in report.heads else {}
    if "classifier" in report.heads:
        model_type = _hugging_face_head_type(report)
        head = report.heads["classifier"]
        # its bias adds the same to every choice: the softmax drops it
        if model_type == "multiple_choice":
            head = {"kernel": head["kernel"]}
        heads[model_type] = head
    return heads


def _hugging_face_head_type(report: LoadReport) -> str:
    """A `classifier` head's model type, by the architecture a Hugging Face config.json names."""
    path = hugging_face_config_file(CheckpointFormat(report.format), report.path)
    if path is None:
        return "classifier"
    architectures = read_hugging_face_architectures(path)
    return next(
        (model_type for name, model_type in _HUGGING_FACE_HEADS.items() if name in architectures),
        "classifier",
    )


def missing_head(name: str) -> str:
    """The phrase for a checkpoint without a head of model type `name`."""
    return f"no {name} head ({HEAD_NAMES[name]})"


def load_task_head(
    model: keras.Model, heads: dict, labels: Sequence[str] | None = None
) -> str | None:
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
        return f"its {name} head has shapes {shapes}, the model needs {wanted}"
    if labels and head.get("labels"):
        order = label_order(head["labels"], labels)
        if order is None:
            return f"its {name} head predicts {', '.join(head['labels'])}, not {', '.join(labels)}"
        weights = [w[..., order] for w in weights]
    layer.set_weights(weights)
    return None


def label_order(head_labels: Sequence[str], labels: Sequence[str]) -> list[int] | None:
    """For each of `labels`, the index of the same name (ignoring case) in `head_labels`;
    None unless the two name the same classes.

    >>> label_order(["NEGATIVE", "POSITIVE"], ["positive", "negative"])
    [1, 0]
    """
    theirs, ours = (
        [label.casefold() for label in head_labels],
        [label.casefold() for label in labels],
    )
    if sorted(theirs) != sorted(ours) or len(set(theirs)) != len(theirs):
        return None
    return [theirs.index(label) for label in ours]
