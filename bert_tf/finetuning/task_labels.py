"""`task_labels`: a task's class names, from its data or from the checkpoint a run restores."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import tensorflow as tf

from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.task_heads import label_order
from bert_tf.errors import UserInputError


def task_labels(
    task, read: Callable[[], Sequence[str]], source: str, fixed: bool = False
) -> tuple[str, ...]:
    """A task's class names in id order: `read()` gives them from `source` (its training file, or
    with `fixed` the task itself, as GLUE's), unless the checkpoint a run without `--do_train`
    restores (`task.starting_checkpoint`) names its classes (a bert_tf run's `labels.json`, a
    Hugging Face `id2label`) and `source` is a file that does not exist: then the checkpoint's
    names are the task's.

    Where both name classes, they must be the same names (ignoring case; the head's outputs
    are reordered to the task's ids), or the run is refused with a line naming both, rather
    than mapping the head's outputs onto other names.
    """
    checkpoint = None if task.options.do_train else _restored(task)
    saved = None if checkpoint is None else checkpoint.labels
    if saved is not None and not fixed and not tf.io.gfile.exists(source):
        return saved
    labels = tuple(read())
    if saved is not None and label_order(saved, labels) is None:
        raise UserInputError(
            f"{source} has the labels {', '.join(labels)}, but the checkpoint was fine-tuned on "
            f"{', '.join(saved)} ({checkpoint.path})"
        )
    return labels


def _restored(task):
    """The task's starting checkpoint; None where there is none, or it is not there (the driver
    reports that, naming the flag)."""
    try:
        return task.starting_checkpoint
    except CheckpointError:
        return None
