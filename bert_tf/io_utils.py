"""Output files that are never left half-written: write a temporary name, then rename."""

from __future__ import annotations

import contextlib
import os
import uuid

import tensorflow as tf


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike):
    """Yields a temporary path beside `path`; renames it onto `path` on success.

    On an exception the temporary file is removed, so readers see either the
    old file, or none, or the complete new one. Works for local paths and for
    the remote file systems `tf.io.gfile` knows (gs://).

    Example:
    >>> with atomic_output("/tmp/out.txt") as tmp:
    ...     with open(tmp, "w") as f:
    ...         _ = f.write("done")
    """
    path = os.fspath(path)
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        yield tmp
        tf.io.gfile.rename(tmp, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Writes `text` (UTF-8) to `path` atomically."""
    with atomic_output(path) as tmp:
        with tf.io.gfile.GFile(tmp, "w") as f:
            f.write(text)
