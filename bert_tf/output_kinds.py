"""Which kind of run an output directory holds, so that pretraining and fine-tuning never write into
each other's directories.

No marker file: each kind is recognised by what its own code resumes from. A pretraining run's
directory has a checkpoint state file (`tf.train.latest_checkpoint`), a fine-tuning run's a
`best/` checkpoint or a `backup/`. A directory of no kind (new, empty, or holding other files)
takes either.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

import tensorflow as tf

from bert_tf import output_lock
from bert_tf.errors import UserInputError
from bert_tf.finetuning.best_checkpoint import BEST_DIR, best_checkpoint_prefix
from bert_tf.finetuning.training_backup import BACKUP_DIR

PRETRAINING = "pretraining"
FINE_TUNING = "fine-tuning"


class OutputDirOfAnotherKind(UserInputError):
    """The output directory holds another kind of run's outputs, which this run would mix in."""


def _pretraining_outputs(directory: str) -> str | None:
    """The newest checkpoint's name where `directory` holds a pretraining run's (as it resumes)."""
    latest = tf.train.latest_checkpoint(directory)
    return os.path.basename(latest) if latest else None


def _fine_tuning_outputs(directory: str) -> str | None:
    """`best/`, `backup/` or both, where `directory` holds a fine-tuning run's."""
    found = [
        f"{name}/"
        for name, present in (
            (BEST_DIR, best_checkpoint_prefix(directory)),
            (BACKUP_DIR, tf.train.latest_checkpoint(os.path.join(directory, BACKUP_DIR))),
        )
        if present
    ]
    return " and ".join(found) or None


_OUTPUTS: dict[str, Callable[[str], str | None]] = {
    PRETRAINING: _pretraining_outputs,
    FINE_TUNING: _fine_tuning_outputs,
}


def check_kind(directory: str, flag: str, kind: str) -> None:
    """Raises `OutputDirOfAnotherKind` if `directory`
    holds another kind's outputs and none of `kind`'s.

    Args:
        directory: the output directory.
        flag: the flag that names it, for the error.
        kind: `PRETRAINING` or `FINE_TUNING`, the run's.
    """
    if _OUTPUTS[kind](directory):
        return
    for other, outputs in _OUTPUTS.items():
        found = other != kind and outputs(directory)
        if found:
            raise OutputDirOfAnotherKind(
                f"`{flag}`={directory} holds a {other} run's outputs "
                f"({found}); a {kind} run writes to a new or "
                f"empty directory, or to an earlier {kind} run's: choose another `{flag}`"
            )


@contextlib.contextmanager
def claimed(directory: str, flag: str, kind: str, keep: Callable[[], bool] | None = None):
    """`output_lock.claimed(directory, flag, keep=keep)`, refusing a directory of another kind
    (`check_kind`) once the lock is held."""
    directory = os.fspath(directory).rstrip("/")
    with output_lock.claimed(directory, flag, keep=keep) as claim:
        check_kind(directory, flag, kind)
        yield claim
