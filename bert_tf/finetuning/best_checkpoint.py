"""`BestCheckpoint`: evaluates each epoch and keeps the weights with the best main metric."""

from __future__ import annotations

import json
import os

import keras
import tensorflow as tf
from absl import logging

from bert_tf import io_utils

BEST_DIR = "best"
_PREFIX = "ckpt"


class BestCheckpoint(keras.callbacks.Callback):
    """After each epoch, runs `evaluate()`; when `metric` improves, saves the task model.

    The weights go to `output_dir/best/ckpt` as a `tf.train.Checkpoint(model=...)`,
    which every script's `--init_checkpoint` and `export_model.py` read, and the
    metrics to `output_dir/best/metrics.json`. The directory is replaced as a whole
    (written under a temporary name, then renamed), so a crash never leaves a
    half-written best checkpoint. A run that resumes (`resume=True`) continues from
    the recorded best; a new run replaces whatever an earlier run left after its
    first epoch, so that what it writes always comes from its own weights.
    """

    def __init__(self, task_model: keras.Model, output_dir: str, evaluate, metric: str,
                 resume: bool = False):
        super().__init__()
        self.task_model = task_model
        self.directory = os.path.join(output_dir, BEST_DIR)
        self.evaluate = evaluate
        self.metric = metric
        self.resume = resume
        recorded = read_best_metrics(output_dir) if resume else None
        # A run without --do_eval records only its epoch: no best to beat.
        self.best = recorded if recorded and metric in recorded else None
        self.eval_writer = tf.summary.create_file_writer(os.path.join(output_dir, "logs", "eval"))

    def on_epoch_end(self, epoch, logs=None):
        results = dict(self.evaluate(), epoch=epoch + 1)
        with self.eval_writer.as_default(step=epoch + 1):
            for name, value in results.items():
                tf.summary.scalar(name, value)
        improved = self.best is None or results[self.metric] > self.best[self.metric]
        logging.info("Epoch %d: %s%s", epoch + 1, results, " (best so far)" if improved else "")
        print(f"Epoch {epoch + 1} eval: " + ", ".join(f"{k} {v:.4f}" for k, v in results.items()
                                                      if k != "epoch") + (" (best)" if improved else ""))
        if improved:
            self.best = results
            save_model_checkpoint(self.task_model, self.directory, results)


def save_model_checkpoint(task_model: keras.Model, directory: str, metrics: dict) -> None:
    """Replaces `directory` with the model's checkpoint, its `bert_config.json` and its metrics.

    With the config beside it, the checkpoint needs no `--bert_config_file` downstream.
    """
    with io_utils.atomic_directory(directory) as tmp:
        tf.train.Checkpoint(model=_weights_only(task_model)).write(os.path.join(tmp, _PREFIX))
        task_model.encoder.bert_config.to_json_file(os.path.join(tmp, "bert_config.json"))
        io_utils.atomic_write_text(os.path.join(tmp, "metrics.json"), json.dumps(metrics, indent=2) + "\n")


def _weights_only(task_model: keras.Model) -> tf.train.Checkpoint:
    """The task model's layers, without the optimizer that `compile` attached to it.

    The children are named as the model's own attributes (`encoder`, and each head
    layer under its name, which the task models keep equal to the attribute), so
    `tf.train.Checkpoint(model=task_model)` reads the result back.
    """
    layers = {layer.name: layer for layer in task_model.layers
              if layer is not task_model.encoder and layer.weights}
    return tf.train.Checkpoint(encoder=task_model.encoder, **layers)


def restore_model_checkpoint(task_model: keras.Model, prefix: str) -> None:
    """Reads a checkpoint written by `save_model_checkpoint` into `task_model`; every layer must match."""
    tf.train.Checkpoint(model=_weights_only(task_model)).read(prefix).assert_existing_objects_matched()


def best_checkpoint_prefix(output_dir: str) -> str | None:
    """The best checkpoint's prefix in `output_dir`, or None if there is none."""
    prefix = os.path.join(output_dir, BEST_DIR, _PREFIX)
    return prefix if tf.io.gfile.exists(prefix + ".index") else None


def read_best_metrics(output_dir: str) -> dict | None:
    path = os.path.join(output_dir, BEST_DIR, "metrics.json")
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)
