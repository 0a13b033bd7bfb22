"""Pretraining checkpoints: named parts, a CheckpointManager, resume and warm start."""

from __future__ import annotations

import tensorflow as tf
from absl import logging

from bert_tf.models.bert_pretrainer import BertPretrainer


def pretraining_checkpoint(model: BertPretrainer, optimizer) -> tf.train.Checkpoint:
    """The checkpoint layout: `model` (encoder + heads), `encoder` (the same encoder,
    so `tf.train.Checkpoint(encoder=...)` restores it alone) and `optimizer`
    (its slots and `iterations`, which is the global step)."""
    return tf.train.Checkpoint(model=model, encoder=model.encoder, optimizer=optimizer)


def restore_or_initialize(manager: tf.train.CheckpointManager, model: BertPretrainer,
                          init_checkpoint: str | None) -> None:
    """Resumes from the newest checkpoint in the manager's directory; failing that,
    loads `init_checkpoint` (weights only); failing that, keeps the fresh weights."""
    if manager.latest_checkpoint:
        manager.checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
        logging.info("Resumed from %s", manager.latest_checkpoint)
    elif init_checkpoint:
        restore_weights(model, init_checkpoint)
        logging.info("Initialised from %s", init_checkpoint)


def restore_weights(model: BertPretrainer, path: str) -> None:
    """Loads model weights (no optimizer state) from a bert_tf checkpoint prefix or directory."""
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"--init_checkpoint={path}: no checkpoint in this directory")
        path = latest
    try:
        names = {name for name, _ in tf.train.list_variables(path)}
    except (tf.errors.NotFoundError, tf.errors.DataLossError, ValueError) as e:
        raise ValueError(f"--init_checkpoint={path}: not a readable checkpoint ({e})") from None
    if any(name.startswith("model/") for name in names):
        status = tf.train.Checkpoint(model=model).restore(path)
    else:
        status = tf.train.Checkpoint(encoder=model.encoder).restore(path)
    status.expect_partial()
