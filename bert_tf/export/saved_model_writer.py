"""Writing a SavedModel directory atomically: a temporary sibling, then a rename."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.io_utils import atomic_directory


def save_atomically(module: tf.Module, export_dir: str | os.PathLike, signatures: dict) -> str:
    """`tf.saved_model.save` into a temporary directory beside `export_dir`, then moves it there.

    Readers see the old export, none, or the complete new one; an existing
    `export_dir` is replaced (`io_utils.replace_directory`). Returns `export_dir` as a string.
    """
    export_dir = os.fspath(export_dir).rstrip("/")
    with atomic_directory(export_dir) as tmp:
        tf.saved_model.save(module, tmp, signatures=signatures)
    return export_dir
