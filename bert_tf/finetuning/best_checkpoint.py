"""`BestCheckpoint`: evaluates each epoch and keeps the weights with the best main metric."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import keras
import tensorflow as tf
from absl import logging

from bert_tf import io_utils, text_files
from bert_tf.bert_config import CONFIG_FILE
from bert_tf.checkpoints.labels_file import LABELS_FILE
from bert_tf.finetuning.training_backup import RUN_ID

BEST_DIR = "best"
METRICS_FILE = "metrics.json"  # the best epoch's eval metrics and the run's id
_PREFIX = "ckpt"


class BestCheckpoint(keras.callbacks.Callback):
    """After each epoch, runs `evaluate()`; when `metric` improves, saves the task model.

    The weights go to `output_dir/best/ckpt` as a `tf.train.Checkpoint(model=...)`,
    which every script's `--init_checkpoint` and `export_model.py` read, the
    metrics to `output_dir/best/metrics.json`, and `labels` (the task's class names
    in id order, if it has them) to `output_dir/best/labels.json`. The directory is
    replaced as a whole (written under a temporary name, then renamed), so a crash
    never leaves a half-written best checkpoint. metrics.json records `run_id`, the
    run's (its backup's): a run that resumes (`resume=True`) continues from the best
    it recorded itself, and replaces any other (an earlier run's, which a kill before
    its first evaluation leaves) after its first epoch, as a new run does, so that
    what it writes always comes from its own weights. `resume_from` is the output directory
    whose best it continues from, when it is not `output_dir` (a worker other than the chief
    writes into a directory of its own, but continues from the chief's).
    """

    def __init__(
        self,
        task_model: keras.Model,
        output_dir: str,
        evaluate,
        metric: str,
        run_id: str,
        resume: bool = False,
        labels: Sequence[str] | None = None,
        resume_from: str | None = None,
    ):
        super().__init__()
        self.task_model = task_model
        self.labels = labels
        self.directory = os.path.join(output_dir, BEST_DIR)
        self.evaluate = evaluate
        self.metric = metric
        self.run_id = run_id
        recorded = read_best_metrics(resume_from or output_dir) if resume else None
        # Only this run's own best is one to beat (one without --do_eval records only its epoch).
        own = recorded and recorded.get(RUN_ID) == run_id and metric in recorded
        self.best = recorded if own else None
        self.eval_writer = tf.summary.create_file_writer(os.path.join(output_dir, "logs", "eval"))

    def on_epoch_end(self, epoch, logs=None):
        self.evaluate_epoch(epoch + 1)

    def evaluate_epoch(self, epoch: int) -> None:
        """Evaluates the weights as they are, as those of (1-based) `epoch`, and keeps them if they
        are the best. A resumed run calls it for the epoch whose end its backup holds: a crash may
        have cut that evaluation short (evaluating it twice changes nothing)."""
        results = dict(self.evaluate(), epoch=epoch)
        with self.eval_writer.as_default(step=epoch):
            for name, value in results.items():
                tf.summary.scalar(name, value)
        improved = self.best is None or results[self.metric] > self.best[self.metric]
        logging.info("Epoch %d: %s%s", epoch, results, " (best so far)" if improved else "")
        print(
            f"Epoch {epoch} eval: "
            + ", ".join(f"{k} {v:.4f}" for k, v in results.items() if k != "epoch")
            + (" (best)" if improved else "")
        )
        if improved:
            self.best = results
            save_model_checkpoint(
                self.task_model, self.directory, {**results, RUN_ID: self.run_id}, self.labels
            )


def save_model_checkpoint(
    task_model: keras.Model, directory: str, metrics: dict, labels: Sequence[str] | None = None
) -> None:
    """Replaces `directory` with the model's checkpoint, its `bert_config.json`, its metrics and,
    for a task with named classes, `labels.json` (the names in id order, a JSON list).

    With the config and labels beside it, the checkpoint needs no `--bert_config_file`,
    `--labels` or training file downstream.
    """
    with io_utils.atomic_directory(directory) as tmp:
        tf.train.Checkpoint(model=_weights_only(task_model)).write(os.path.join(tmp, _PREFIX))
        task_model.encoder.bert_config.to_json_file(os.path.join(tmp, CONFIG_FILE))
        io_utils.atomic_write_text(
            os.path.join(tmp, METRICS_FILE), json.dumps(metrics, indent=2) + "\n"
        )
        if labels is not None:
            io_utils.atomic_write_text(
                os.path.join(tmp, LABELS_FILE), json.dumps(list(labels)) + "\n"
            )


def _weights_only(task_model: keras.Model) -> tf.train.Checkpoint:
    """The task model's layers, without the optimizer that `compile` attached to it.

    The children are named as the model's own attributes (`encoder`, and each head
    layer under its name, which the task models keep equal to the attribute), so
    `tf.train.Checkpoint(model=task_model)` reads the result back.
    """
    layers = {
        layer.name: layer
        for layer in task_model.layers
        if layer is not task_model.encoder and layer.weights
    }
    return tf.train.Checkpoint(encoder=task_model.encoder, **layers)


def restore_model_checkpoint(task_model: keras.Model, prefix: str) -> None:
    """Reads a `save_model_checkpoint` checkpoint into `task_model`; every layer must match."""
    tf.train.Checkpoint(model=_weights_only(task_model)).read(
        prefix
    ).assert_existing_objects_matched()


def best_checkpoint_prefix(output_dir: str) -> str | None:
    """The best checkpoint's prefix in `output_dir`, or None if there is none."""
    prefix = os.path.join(output_dir, BEST_DIR, _PREFIX)
    return prefix if tf.io.gfile.exists(prefix + ".index") else None


def read_best_metrics(output_dir: str) -> dict | None:
    path = os.path.join(output_dir, BEST_DIR, METRICS_FILE)
    return text_files.read_json(path, ValueError) if tf.io.gfile.exists(path) else None


def starting_checkpoint_path(options) -> str | None:
    """The checkpoint a run starts from: `--init_checkpoint`, else, for a run without `--do_train`,
    `output_dir/best`'s, whose weights it scores (None if it has none)."""
    if options.init_checkpoint or options.do_train:
        return options.init_checkpoint
    return best_checkpoint_prefix(options.output_dir)
