"""Building a task model or a pretrainer from a checkpoint in any format, with its head, for export."""

from __future__ import annotations

import json
import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import LoadReport, load_checkpoint
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.bert_tf_checkpoint import layer_weights
from bert_tf.checkpoints.tf_checkpoint_reader import ObjectGraph, encoder_paths, open_reader
from bert_tf.finetuning.task import label_order
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer, BertSpanLabeler,
                            BertTokenClassifier)

MODEL_TYPES = ("classifier", "span", "token", "multiple_choice", "hub")
# By model type: the task model and its head layer's attribute (a bert_tf checkpoint's `model/<attribute>`).
_TASK_MODELS = {"classifier": (BertClassifier, "classifier"), "token": (BertTokenClassifier, "token_classifier"),
                "span": (BertSpanLabeler, "span_classifier"),
                "multiple_choice": (BertMultipleChoice, "choice_scorer")}
# By model type: the role of a google-research/bert or Hugging Face head (`LoadReport.heads`) it takes.
# TF1's `output_weights` is run_classifier.py's sentence head (google-research/bert has no tagger), and
# Hugging Face names the sentence and the token classifier alike `classifier`: a token export takes that
# head only from a Hugging Face checkpoint whose config.json says BertForTokenClassification.
_ROLES = {"classifier": "classifier", "token": "classifier", "span": "squad"}
# What each model type's head is called in the formats, for the error naming the missing head.
_HEAD_NAMES = {"classifier": "output_weights, Hugging Face classifier or a bert_tf classifier",
               "token": "Hugging Face BertForTokenClassification or a bert_tf token classifier",
               "span": "cls/squad/..., Hugging Face qa_outputs or a bert_tf span model",
               "multiple_choice": "a bert_tf multiple-choice model"}


def model_from_checkpoint(checkpoint: str, model_type: str, config: BertConfig, num_classes: int | None = None,
                          labels: list[str] | None = None):
    """A model of `model_type` (one of `MODEL_TYPES`; "hub" is a `BertPretrainer`) filled from `checkpoint`.

    The head comes from the checkpoint: google-research/bert's `output_weights` or
    `cls/squad/...` (any format `load_checkpoint` reads), or the head layer of a
    bert_tf task model (`tf.train.Checkpoint(model=...)`, `.keras`); a checkpoint
    without the head of `model_type` is an error. `num_classes` defaults to the head's
    width; a head of another width is an error. A head that names its classes (Hugging
    Face) is reordered to `labels` (class names in id order); other classes are an error.
    The checkpoint is read once (a `.keras` file twice).

    Example (a google-research/bert classifier checkpoint with 3 classes):
    >>> from bert_tf.checkpoints import write_tf1_checkpoint
    >>> config = BertConfig.from_json_file("bert_config.json")
    >>> head = {"kernel": np.zeros((config.hidden_size, 3), "float32"), "bias": np.zeros(3, "float32")}
    >>> prefix = write_tf1_checkpoint(BertEncoder.from_bert_config(config), "tf1/bert_model.ckpt",
    ...                               heads={"classifier": head})
    >>> model = model_from_checkpoint(prefix, "classifier", config)
    >>> type(model).__name__, model.num_classes
    ('BertClassifier', 3)
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"--model_type={model_type!r}: expected one of {', '.join(MODEL_TYPES)}")
    if model_type == "hub":
        return _pretrainer_from_checkpoint(checkpoint, config)
    encoder = BertEncoder.from_bert_config(config)
    report = load_checkpoint(checkpoint, encoder)
    head = _checkpoint_head(report, model_type)
    if head is None:
        raise ValueError(f"{checkpoint}: no {model_type} head ({_HEAD_NAMES[model_type]}); export it with "
                         "the --model_type it was fine-tuned for")
    model_class, layer = _TASK_MODELS[model_type]
    if model_type in ("classifier", "token"):
        model = model_class(encoder, _num_classes(checkpoint, head, num_classes))
    else:
        model = model_class(encoder)
    model.build_with_dummy_inputs()
    _assign_head(checkpoint, getattr(model, layer), head, labels)
    return model


def _pretrainer_from_checkpoint(checkpoint: str, config: BertConfig) -> BertPretrainer:
    model = BertPretrainer(BertEncoder.from_bert_config(config))
    model.build({"input_ids": (None, None), "masked_lm_positions": (None, None)})
    load_checkpoint(checkpoint, model)
    return model


def _checkpoint_head(report: LoadReport, model_type: str) -> dict | None:
    """The checkpoint's head for `model_type`, `{"kernel": [hidden, k], "bias": [k]}` (no bias for
    multiple choice; `"labels"` where it names its classes, `"role"` for messages), or None."""
    if report.format in (CheckpointFormat.BERT_TF.value, CheckpointFormat.KERAS.value):
        head, role = _bert_tf_head(report, model_type), model_type
    else:
        role = _ROLES.get(model_type)
        head = report.heads.get(role) if model_type != "token" or _is_hugging_face_tagger(report) else None
    return {**head, "role": role} if head else None


def _bert_tf_head(report: LoadReport, model_type: str) -> dict | None:
    """The head layer's weights, by attribute, of a bert_tf task model of `model_type`, or None."""
    model_class, layer = _TASK_MODELS[model_type]
    if report.format == CheckpointFormat.KERAS.value:
        saved = keras.saving.load_model(report.path, compile=False)
        return {v.name: v.numpy() for v in getattr(saved, layer).weights} if type(saved) is model_class else None
    reader = open_reader(report.path)
    graph = ObjectGraph(reader)
    return layer_weights(reader, report.path, graph, f"{encoder_paths(graph)[0]}/{layer}")


def _is_hugging_face_tagger(report: LoadReport) -> bool:
    """Whether the checkpoint's Hugging Face config.json names BertForTokenClassification."""
    path = os.path.join(os.path.dirname(report.path), "config.json")
    hugging_face = (CheckpointFormat.SAFETENSORS.value, CheckpointFormat.PYTORCH.value)
    if report.format not in hugging_face or not tf.io.gfile.exists(path):
        return False
    with tf.io.gfile.GFile(path) as f:
        return "BertForTokenClassification" in (json.load(f).get("architectures") or [])


def _num_classes(checkpoint: str, head: dict, num_classes: int | None) -> int:
    """`num_classes`, else the width of the checkpoint's classifier head; the two must agree."""
    width = head["kernel"].shape[-1]
    if num_classes not in (None, width):
        raise ValueError(f"--num_classes={num_classes} (or the number of --labels) does not fit {checkpoint}: "
                         f"its {head['role']} head has {width} classes")
    return width


def _assign_head(checkpoint: str, layer: keras.layers.Dense, head: dict, labels: list[str] | None) -> None:
    """Sets `layer` from `head`, its classes in the order of `labels` where the head names them."""
    kernel, bias = head["kernel"], head.get("bias")
    if labels and head.get("labels"):
        order = label_order(head["labels"], labels)
        if order is None:
            raise ValueError(f"--labels={','.join(labels)} are not the classes of {checkpoint}'s "
                             f"{head['role']} head: {','.join(head['labels'])}")
        kernel, bias = kernel[:, order], bias[order]
    weights = [kernel, bias] if layer.use_bias else [kernel]
    shapes = [np.shape(w) for w in weights]
    wanted = [tuple(v.shape) for v in layer.weights]
    if shapes != wanted:
        raise ValueError(f"{checkpoint}: its {head['role']} head has shapes {shapes}, the model needs {wanted}")
    layer.set_weights(weights)
