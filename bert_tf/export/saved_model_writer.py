"""Writing a SavedModel directory atomically: a temporary sibling, then a rename."""

from __future__ import annotations

import os
import uuid

import tensorflow as tf


def save_atomically(module: tf.Module, export_dir: str | os.PathLike, signatures: dict) -> str:
    """`tf.saved_model.save` into a temporary directory beside `export_dir`, then renames it.

    Readers see the old export, none, or the complete new one; an existing
    `export_dir` is replaced. Returns `export_dir` as a string.
    """
    export_dir = os.fspath(export_dir).rstrip("/")
    parent = os.path.dirname(export_dir)
    if parent:
        tf.io.gfile.makedirs(parent)
    tmp = f"{export_dir}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        tf.saved_model.save(module, tmp, signatures=signatures)
        if tf.io.gfile.exists(export_dir):
            tf.io.gfile.rmtree(export_dir)
        tf.io.gfile.rename(tmp, export_dir)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.rmtree(tmp)
    return export_dir
