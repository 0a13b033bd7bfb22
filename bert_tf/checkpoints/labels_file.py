"""`labels.json`: the class names, in id order, that fine-tuning saves beside its checkpoint."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf import text_files
from bert_tf.errors import UserInputError

LABELS_FILE = "labels.json"  # a JSON list of two or more class names


def labels_beside(location: str) -> str | None:
    """The `labels.json` in the directory of a bert_tf checkpoint's prefix `location`, or None."""
    path = os.path.join(os.path.dirname(location), LABELS_FILE)
    return path if tf.io.gfile.exists(path) else None


def read_labels(path: str) -> tuple[str, ...]:
    """The class names in the `labels.json` at `path`; a `ValueError` naming it if it holds none."""
    labels = text_files.read_json(path, ValueError)
    if not (
        isinstance(labels, list) and len(labels) >= 2 and all(isinstance(x, str) for x in labels)
    ):
        raise UserInputError(f"{path}: expected a JSON list of two or more class names")
    return tuple(labels)
