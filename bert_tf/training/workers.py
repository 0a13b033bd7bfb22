"""Runs on several workers (MultiWorkerMirroredStrategy): which one writes the outputs, where the
others write, and Keras's `fit` made to train there."""

from __future__ import annotations

import contextlib
import tempfile

import keras
import tensorflow as tf
from absl import logging

from bert_tf.errors import UserInputError


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this worker writes the run's outputs: the chief under MultiWorkerMirroredStrategy,
    the only worker under any other strategy."""
    return strategy.extended.should_checkpoint


@contextlib.contextmanager
def writing_directory(strategy: tf.distribute.Strategy, output_dir: str):
    """The directory this worker writes its outputs to: `output_dir` on the chief; on each other
    worker, a temporary directory of its own, removed afterwards.

    Every worker must save its checkpoints (saving may run collective ops), so the others save
    where nobody reads (TensorFlow's guidance), and `output_dir` holds the chief's files only.
    """
    if is_chief(strategy):
        yield output_dir
        return
    with tempfile.TemporaryDirectory(prefix="bert_tf-worker-") as directory:
        logging.info(
            "Not the chief: this worker writes into %s, removed at the end, not %s",
            directory,
            output_dir,
        )
        yield directory


def check_same_resume_step(strategy: tf.distribute.Strategy, step: int, resumed_from: str) -> None:
    """Raises `UserInputError` on every worker unless
    every worker resumes from the same global `step`.

    Every worker resumes from the chief's checkpoints in `resumed_from`; a worker that sees another
    directory under that path (a local disk, not a shared one) would train other steps, and the
    workers would wait on each other's collective ops or mix two runs.
    """
    if not _several_workers(strategy):
        return
    # Σ [step, step²] over the n replicas is n [step, step²]
    # only if every replica's step is this one (variance 0).
    values = tf.constant([step, step * step], tf.float64)
    sums = strategy.reduce("SUM", strategy.run(lambda: values), axis=None).numpy()
    if not (sums == strategy.num_replicas_in_sync * values.numpy()).all():
        raise UserInputError(
            f"{resumed_from}: this worker resumes from step "
            f"{step}, but not every worker does; every "
            "worker must read the chief's output directory at that path (a shared one, such as gs://)"
        )


def fit_across_workers(model: keras.Model, strategy: tf.distribute.Strategy) -> None:
    """Lets Keras's `model.fit` train under MultiWorkerMirroredStrategy with several workers.

    Keras 3's `fit` fails there twice (as of Keras 3.16), and `model` works around both:
    - before its first step it takes the input shapes from a first batch that it averages over the
      replicas, which the strategy cannot do for a nest of per-replica values ("Attempt to convert a
      value ({'input_word_ids': PerReplica..."): shapes need no reduction, so this worker's first
      replica gives them;
    - after each step it averages every log over the replicas along axis 0, which a scalar lacks
      ("Invalid reduction dimension 0 for input with 0 dimensions"): the logs get that axis.
    Other strategies, and a cluster of one worker, keep Keras's own `fit`.
    """
    if not _several_workers(strategy):
        return
    keras_build, keras_train_step = model._maybe_symbolic_build, model.train_step

    def symbolic_build(iterator=None, data_batch=None):
        if iterator is not None:
            # Keras's epoch iterator: (first step, last step, an iterator)
            for _, _, batches in iterator:
                data_batch = tf.nest.map_structure(
                    lambda v: strategy.experimental_local_results(v)[0], next(batches)
                )
                break
        keras_build(data_batch=data_batch)

    def train_step(data):
        return tf.nest.map_structure(
            lambda log: log[tf.newaxis] if log.shape.rank == 0 else log, keras_train_step(data)
        )

    model._maybe_symbolic_build = symbolic_build
    model.train_step = train_step


def _several_workers(strategy: tf.distribute.Strategy) -> bool:
    """Whether `strategy` is multi-worker mirrored with more replicas than this worker's devices."""
    return isinstance(
        strategy, tf.distribute.MultiWorkerMirroredStrategy
    ) and strategy.num_replicas_in_sync > len(strategy.extended.worker_devices)
