"""Building a task model or a pretrainer from a checkpoint in any format, with its head, for export."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import checkpoint_config, detect_format, load_checkpoint
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice, BertPretrainer, BertSpanLabeler,
                            BertTokenClassifier)

MODEL_TYPES = ("classifier", "span", "token", "multiple_choice", "hub")
_HEAD_LAYER = {"classifier": ("classifier", "classifier"), "token": ("classifier", "classifier"),
               "span": ("squad", "span_classifier")}


def model_from_checkpoint(checkpoint: str, model_type: str, bert_config_file: str | None = None,
                          num_classes: int | None = None):
    """A model of `model_type` (one of `MODEL_TYPES`; "hub" is a `BertPretrainer`) filled from `checkpoint`.

    The head comes from the checkpoint: google-research/bert's `output_weights`/`cls/squad`
    (any format `load_checkpoint` reads), or the whole model of a bert_tf checkpoint.
    `num_classes` defaults to the checkpoint head's width.

    Example:
    >>> model = model_from_checkpoint("out/model.ckpt-1000", "classifier")  # doctest: +SKIP
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"--model_type={model_type!r}: expected one of {', '.join(MODEL_TYPES)}")
    config = BertConfig.from_json_file(bert_config_file) if bert_config_file else checkpoint_config(checkpoint)
    if config is None:
        raise ValueError(f"{checkpoint}: no bert_config.json beside the checkpoint; pass --bert_config_file")
    probe = BertEncoder.from_bert_config(config)
    heads = load_checkpoint(checkpoint, probe).heads
    role, layer = _HEAD_LAYER.get(model_type, (None, None))
    if model_type in ("classifier", "token") and num_classes is None:
        if "classifier" not in heads:
            raise ValueError(f"{checkpoint}: no classifier head (output_weights); pass --num_classes")
        num_classes = heads["classifier"]["bias"].shape[0]
    encoder = BertEncoder.from_bert_config(config)
    model = {"classifier": lambda: BertClassifier(encoder, num_classes),
             "token": lambda: BertTokenClassifier(encoder, num_classes),
             "span": lambda: BertSpanLabeler(encoder), "multiple_choice": lambda: BertMultipleChoice(encoder),
             "hub": lambda: BertPretrainer(encoder)}[model_type]()
    if model_type == "hub":
        ones = tf.ones([1, 1], tf.int32)
        model({"input_ids": ones, "input_mask": ones, "segment_ids": ones, "masked_lm_positions": ones})
    else:
        model.build_with_dummy_inputs()
    report = load_checkpoint(checkpoint, model)
    if role in report.heads:
        dense = getattr(model, layer)
        dense.kernel.assign(report.heads[role]["kernel"])
        dense.bias.assign(report.heads[role]["bias"])
    elif report.format == CheckpointFormat.BERT_TF.value and model_type != "hub":
        location = detect_format(checkpoint)[1]
        tf.train.Checkpoint(model=model).read(os.fspath(location)).expect_partial()
    return model
