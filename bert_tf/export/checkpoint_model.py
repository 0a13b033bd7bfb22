"""Building a task model or a pretrainer from a checkpoint in any format, with its head, for export."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import LoadReport, detect_format, load_checkpoint
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.finetuning.task import assign_dense_head, label_order
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer, BertSpanLabeler,
                            BertTokenClassifier)

MODEL_TYPES = ("classifier", "span", "token", "multiple_choice", "hub")
# By model type: the role of google-research/bert's fine-tuned head (`LoadReport.heads`), the layer taking it.
_HEAD_LAYER = {"classifier": ("classifier", "classifier"), "token": ("classifier", "classifier"),
               "span": ("squad", "span_classifier")}


def model_from_checkpoint(checkpoint: str, model_type: str, config: BertConfig, num_classes: int | None = None,
                          labels: list[str] | None = None):
    """A model of `model_type` (one of `MODEL_TYPES`; "hub" is a `BertPretrainer`) filled from `checkpoint`.

    The checkpoint is read once. The head comes from it: google-research/bert's
    `output_weights`/`cls/squad` (any format `load_checkpoint` reads), or the whole
    model of a bert_tf checkpoint. `num_classes` defaults to the checkpoint head's
    width; a head of another width is an error. A head that names its classes (Hugging
    Face) is reordered to `labels` (class names in id order); other classes are an error.

    Example:
    >>> config = resolve_bert_config(None, "out/model.ckpt-1000")  # doctest: +SKIP
    >>> model = model_from_checkpoint("out/model.ckpt-1000", "classifier", config)  # doctest: +SKIP
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"--model_type={model_type!r}: expected one of {', '.join(MODEL_TYPES)}")
    if model_type == "hub":
        return _pretrainer_from_checkpoint(checkpoint, config)
    encoder = BertEncoder.from_bert_config(config)
    report = load_checkpoint(checkpoint, encoder)
    if model_type in ("classifier", "token"):
        num_classes = _num_classes(checkpoint, report, num_classes)
    model = {"classifier": lambda: BertClassifier(encoder, num_classes),
             "token": lambda: BertTokenClassifier(encoder, num_classes),
             "span": lambda: BertSpanLabeler(encoder),
             "multiple_choice": lambda: BertMultipleChoice(encoder)}[model_type]()
    model.build_with_dummy_inputs()
    _load_head(checkpoint, report, model, model_type, labels)
    return model


def _pretrainer_from_checkpoint(checkpoint: str, config: BertConfig) -> BertPretrainer:
    model = BertPretrainer(BertEncoder.from_bert_config(config))
    model.build({"input_ids": (None, None), "masked_lm_positions": (None, None)})
    load_checkpoint(checkpoint, model)
    return model


def _num_classes(checkpoint: str, report: LoadReport, num_classes: int | None) -> int:
    """`num_classes`, else the width of the checkpoint's classifier head; the two must agree."""
    head = report.heads.get("classifier")
    if head is None:
        if num_classes is None:
            raise ValueError(f"{checkpoint}: no classifier head (output_weights); pass --num_classes")
        return num_classes
    width = head["bias"].shape[0]
    if num_classes not in (None, width):
        raise ValueError(f"--num_classes={num_classes} (or the number of --labels) does not fit {checkpoint}: "
                         f"its classifier head has {width} classes")
    return width


def _load_head(checkpoint: str, report: LoadReport, model, model_type: str, labels: list[str] | None) -> None:
    """The task head: a google-research/bert head from `report`, or the rest of a bert_tf checkpoint."""
    role, layer = _HEAD_LAYER.get(model_type, (None, None))
    if role in report.heads:
        head = report.heads[role]
        if labels and head.get("labels") and label_order(head["labels"], labels) is None:
            raise ValueError(f"--labels={','.join(labels)} are not the classes of {checkpoint}'s "
                             f"{role} head: {','.join(head['labels'])}")
        assign_dense_head(getattr(model, layer), head, f"{role} head", labels)
    elif report.format == CheckpointFormat.BERT_TF.value:
        tf.train.Checkpoint(model=model).read(os.fspath(detect_format(checkpoint)[1])).expect_partial()
