"""Pretraining checkpoints: named parts, a CheckpointManager, resume and warm start."""

from __future__ import annotations

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import load_init_checkpoint
from bert_tf.models.bert_pretrainer import BertPretrainer


def pretraining_checkpoint(model: BertPretrainer, optimizer) -> tf.train.Checkpoint:
    """The checkpoint layout: `model` (encoder + heads), `encoder` (the same encoder,
    so `tf.train.Checkpoint(encoder=...)` restores it alone) and `optimizer`
    (its slots and `iterations`, which is the global step)."""
    return tf.train.Checkpoint(model=model, encoder=model.encoder, optimizer=optimizer)


def restore_or_initialize(manager: tf.train.CheckpointManager, model: BertPretrainer,
                          init_checkpoint: str | None) -> None:
    """Resumes from the newest checkpoint in the manager's directory; failing that,
    loads `init_checkpoint` (weights only, any format `bert_tf.checkpoints.load_checkpoint`
    reads: Google TF1, Model Garden TF2, Hugging Face, bert_tf); failing that, keeps the
    fresh weights."""
    if manager.latest_checkpoint:
        manager.checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
        logging.info("Resumed from %s", manager.latest_checkpoint)
    elif init_checkpoint:
        load_init_checkpoint(init_checkpoint, model)
