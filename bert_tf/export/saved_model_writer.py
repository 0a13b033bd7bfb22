"""Writing a SavedModel directory atomically: a temporary sibling, then a rename."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.io_utils import atomic_directory


def export_dir_problem(path: str) -> str | None:
    """Why an export may not be written to `path`, or None: it is absent, empty or an earlier SavedModel.

    An export replaces what is there: a directory of anything else (say a run's
    `--output_dir`, or the checkpoint's own directory) would be deleted.
    """
    if not tf.io.gfile.exists(path):
        return None
    if not tf.io.gfile.isdir(path):
        return "is a file, not a directory"
    if tf.io.gfile.listdir(path) and not tf.saved_model.contains_saved_model(path):
        return ("holds files that are not a SavedModel, which the export would replace; "
                "choose an empty or new directory")
    return None


def check_export_dir(export_dir: str | os.PathLike) -> None:
    """Raises ValueError naming `--export_dir` unless `export_dir` may take an export (`export_dir_problem`)."""
    path = os.fspath(export_dir).rstrip("/")
    problem = export_dir_problem(path)
    if problem:
        raise ValueError(f"--export_dir={path}: {problem}")


def save_atomically(module: tf.Module, export_dir: str | os.PathLike, signatures: dict) -> str:
    """`tf.saved_model.save` into a temporary directory beside `export_dir`, then moves it there.

    Readers see the old export, none, or the complete new one; an existing export
    at `export_dir` is replaced (`io_utils.replace_directory`), anything else there is
    refused (`check_export_dir`). Returns `export_dir` as a string.
    """
    check_export_dir(export_dir)
    export_dir = os.fspath(export_dir).rstrip("/")
    with atomic_directory(export_dir) as tmp:
        tf.saved_model.save(module, tmp, signatures=signatures)
    return export_dir
