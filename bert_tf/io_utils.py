"""Output files that are never left half-written: write a temporary name, then rename.

Temporary names are hidden (`dir/.name.tmp-1a2b3c4d`), in the target's own directory so
that the rename stays on one file system. A glob of the outputs' names, such as
`--input_file='out/data.tfrecord*'`, and bert_tf's own wildcards skip them, but
`tf.io.gfile.glob('out/*')` (google-research/bert's and Model Garden's readers) does not:
so the next write of a target first removes what a killed run left beside it
(`.name.tmp-*`, `.name.old-*`). Two runs writing the same target at once are not
supported: the later one removes the earlier one's temporary.

On the local file system a rename is one atomic step (rename(2)), for a file and for a directory.
Elsewhere (gs://, ram://) renaming a file copies it and deletes the original: the target still
appears only whole, as any object of an object store does, but a directory is moved file by file.
There a directory is replaced in completion order instead (`replace_directory`): the files that
readers take as the sign of a complete directory (`*.index`, `saved_model.pb`, a checkpoint
directory's `checkpoint`) are deleted first and written last, so a reader finds either a complete
directory or none.

Also: output directories whose errors name the flag (`make_directory`) or that a failed run
removes again (`created_directories`), and the temporaries that a killed
`tf.train.CheckpointManager.save` leaves (`remove_interrupted_checkpoint_saves`).
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import os
import re
import uuid
from collections.abc import Callable, Iterable

import tensorflow as tf


def _hidden_sibling(path: str, kind: str) -> str:
    """A fresh hidden name beside `path`: `dir/name` -> `dir/.name.<kind>-<8 hex digits>`."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.{kind}-{uuid.uuid4().hex[:8]}")


def _remove_leftovers(path: str) -> None:
    """Removes the hidden siblings of `path` that a killed write or removal left (`.name.tmp-*`,
    `.name.old-*`, `.name.deleted-*`): temporaries of `path` alone, never of another name. An `.old`
    copy of a `path` that is missing (a kill between `replace_directory`'s two renames) is the
    only copy: it is put back."""
    directory, name = os.path.split(path)
    leftover = re.compile(rf"\.{re.escape(name)}\.(tmp|old|deleted)-[0-9a-f]{{8}}")
    for sibling in tf.io.gfile.glob(
        os.path.join(glob.escape(directory), f".{glob.escape(name)}.*")
    ):
        match = leftover.fullmatch(os.path.basename(sibling))
        if match and match.group(1) == "old" and not tf.io.gfile.exists(path):
            tf.io.gfile.rename(sibling, path)
        elif match:
            (tf.io.gfile.rmtree if tf.io.gfile.isdir(sibling) else tf.io.gfile.remove)(sibling)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike):
    """Yields a hidden temporary path beside `path`; renames it onto `path` on success.

    On an exception the temporary file is removed, so readers see either the
    old file, or none, or the complete new one; what a killed write of `path` left
    is removed first. Works for local paths and for the remote file systems
    `tf.io.gfile` knows (gs://).

    Example:
    >>> with atomic_output("out.txt") as tmp:
    ...     with open(tmp, "w") as f:
    ...         _ = f.write("done")
    >>> open("out.txt").read()
    'done'
    """
    path = os.fspath(path)
    _remove_leftovers(path)
    tmp = _hidden_sibling(path, "tmp")
    try:
        yield tmp
        tf.io.gfile.rename(tmp, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Writes `text` (UTF-8) to `path` atomically."""
    atomic_write_texts({path: text})


def atomic_write_rows(path: str | os.PathLike, rows, delimiter: str = ",") -> None:
    """Writes `rows` (sequences of values, header first) as a CSV file, or a TSV file with
    `delimiter="\\t"`, atomically; lines end in `\\n`, fields are quoted where they need it."""
    text = io.StringIO()
    csv.writer(text, delimiter=delimiter, lineterminator="\n").writerows(rows)
    atomic_write_text(path, text.getvalue())


def _scheme(path: str) -> str:
    """`gs` for `gs://bucket/x`; empty for a plain local path."""
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*)://", path)
    return match.group(1).lower() if match else ""


def is_local(path: str | os.PathLike) -> bool:
    """Whether `path` is local (no `scheme://`, or `file://`), where a rename is atomic."""
    return _scheme(os.fspath(path)) in ("", "file")


def is_process_local(path: str | os.PathLike) -> bool:
    """Whether `path` is on TensorFlow's in-memory `ram://`, which other processes cannot see."""
    return os.fspath(path).startswith("ram://")


def canonical_path(path: str | os.PathLike) -> str:
    """A local `path` with links, `..` and the working directory resolved; others as they are."""
    path = os.fspath(path)
    return path if _scheme(path) else os.path.realpath(path)


def is_within(path: str | os.PathLike, directory: str | os.PathLike) -> bool:
    """Whether `path` is `directory` or under it, on any file system (by `canonical_path`)."""
    path, directory = canonical_path(path).rstrip("/"), canonical_path(directory).rstrip("/")
    return path == directory or path.startswith(directory + "/")


def _completion_rank(name: str) -> int:
    """How late a file named `name` goes into a directory that is written file by file: readers take
    a TF checkpoint's `.index`, a SavedModel's `saved_model.pb` and a checkpoint directory's
    `checkpoint` state file (in this order) as the sign that what they refer to is complete."""
    return {"saved_model.pb": 2, "checkpoint": 3}.get(name, 1 if name.endswith(".index") else 0)


def _tree(directory: str) -> tuple[list[str], list[str]]:
    """(subdirectories, files) under `directory`, relative to it; files in completion order."""
    subdirectories, files = [], []
    for root, _, names in tf.io.gfile.walk(directory):
        relative = root[len(directory) :].strip("/")
        subdirectories += [relative] if relative else []
        files += [f"{relative}/{name}" if relative else name for name in names]
    return subdirectories, sorted(files, key=lambda f: (_completion_rank(f.rsplit("/", 1)[-1]), f))


def _delete_in_completion_order(directory: str) -> None:
    """Deletes `directory`, completion markers first: no reader takes what is left as complete."""
    for name in reversed(_tree(directory)[1]):
        tf.io.gfile.remove(f"{directory}/{name}")
    tf.io.gfile.rmtree(directory)


def _move_in_completion_order(tmp_dir: str, final_dir: str) -> None:
    """Moves the files of `tmp_dir` into the new `final_dir` one by one, completion markers last."""
    subdirectories, files = _tree(tmp_dir)
    for name in ["", *subdirectories]:
        tf.io.gfile.makedirs(f"{final_dir}/{name}".rstrip("/"))
    for name in files:
        tf.io.gfile.rename(f"{tmp_dir}/{name}", f"{final_dir}/{name}")
    tf.io.gfile.rmtree(tmp_dir)


def replace_directory(tmp_dir: str | os.PathLike, final_dir: str | os.PathLike) -> None:
    """Moves the complete directory `tmp_dir` onto `final_dir`, replacing any old one.

    Local: the old directory is renamed aside, the new one renamed in, and only then the old one
    deleted: `final_dir` always holds a complete copy, except for the instant between the two
    renames. On a failure the old directory is put back and `tmp_dir` is removed.

    Elsewhere (`is_local` is False) renames are copies: the old directory is deleted and the new
    one's files are moved in one by one, completion markers (`_completion_rank`) last. Readers that
    require the markers find the old directory, none, or the complete new one; a failure midway
    leaves none, and removes `tmp_dir`.
    """
    tmp_dir, final_dir = os.fspath(tmp_dir).rstrip("/"), os.fspath(final_dir).rstrip("/")
    if not is_local(final_dir):
        try:
            if tf.io.gfile.exists(final_dir):
                _delete_in_completion_order(final_dir)
            _move_in_completion_order(tmp_dir, final_dir)
        except BaseException:
            if tf.io.gfile.exists(tmp_dir):
                tf.io.gfile.rmtree(tmp_dir)
            raise
        return
    old = _hidden_sibling(final_dir, "old")
    try:
        if tf.io.gfile.exists(final_dir):
            tf.io.gfile.rename(final_dir, old)
        tf.io.gfile.rename(tmp_dir, final_dir)
    except BaseException:
        if tf.io.gfile.exists(old) and not tf.io.gfile.exists(final_dir):
            tf.io.gfile.rename(old, final_dir)
        if tf.io.gfile.exists(tmp_dir):
            tf.io.gfile.rmtree(tmp_dir)
        raise
    if tf.io.gfile.exists(old):
        tf.io.gfile.rmtree(old)


def remove_directory(path: str | os.PathLike) -> None:
    """Deletes the directory `path`, if there is one, in one step as its readers see it: a local one
    is renamed aside first, so a kill mid-deletion never leaves part of it under its name; elsewhere
    its completion markers are deleted first (`replace_directory`)."""
    path = os.fspath(path).rstrip("/")
    _remove_leftovers(path)
    if not tf.io.gfile.exists(path):
        return
    if not is_local(path):
        _delete_in_completion_order(path)
        return
    deleted = _hidden_sibling(path, "deleted")
    tf.io.gfile.rename(path, deleted)
    tf.io.gfile.rmtree(deleted)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike):
    """Yields a hidden temporary directory path beside `path`;
    `replace_directory` moves it onto `path` on success.

    On an exception the temporary directory is removed and `path` keeps its old content; what a
    killed write of `path` left is removed first.

    Example:
    >>> with atomic_directory("out/best") as tmp:
    ...     atomic_write_text(os.path.join(tmp, "metrics.json"), "{}")
    >>> os.listdir("out/best")
    ['metrics.json']
    """
    path = os.fspath(path).rstrip("/")
    _remove_leftovers(path)
    tmp = _hidden_sibling(path, "tmp")
    try:
        tf.io.gfile.makedirs(tmp)
        yield tmp
    except BaseException:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.rmtree(tmp)
        raise
    replace_directory(tmp, path)


def require_file(
    path: str | os.PathLike, error: type[Exception] = FileNotFoundError, what: str = "file"
) -> str:
    """`path` as a string, if it names a file; else
    raises `error` with a one-line message naming it.

    Works for local paths and for the remote file systems `tf.io.gfile` knows.
    `what` names the kind of file in the message: `<path>: no such vocab file`.
    """
    path = os.fspath(path)
    if not tf.io.gfile.exists(path):
        raise error(f"{path}: no such {what}")
    if tf.io.gfile.isdir(path):
        raise error(f"{path}: a directory, not a {what}")
    return path


def _highest_missing(directory: str) -> str | None:
    """The outermost of `directory` and its parents that does not exist; None if it exists."""
    missing = None
    while directory and not tf.io.gfile.exists(directory):
        missing, parent = directory, os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return missing


def make_directory(directory: str, flag: str, error: type[Exception] = ValueError) -> str | None:
    """Creates `directory` and its missing parents; returns the outermost one it created (None: it
    existed). A directory that cannot be created raises `error`, naming the setting `flag`."""
    missing = _highest_missing(directory)
    try:
        tf.io.gfile.makedirs(directory)
    except tf.errors.OpError as e:
        raise error(
            f"`{flag}`: cannot create the directory {directory} ({e.message.splitlines()[0]})"
        ) from None
    return missing


@contextlib.contextmanager
def created_directories(
    directories: Iterable[str | os.PathLike],
    flag: str,
    keep: Callable[[], bool] = lambda: False,
    error: type[Exception] = ValueError,
):
    """Creates `directories` (and their missing parents) for the block; if the block fails (Ctrl-C
    too), removes the outermost directory each one created, unless `keep()` says the run left
    something worth keeping. A directory that cannot be created raises `error`, naming the
    setting `flag`: "`output_dir`: cannot create the directory out (out is not a directory)".

    Example:
    >>> with contextlib.suppress(RuntimeError), created_directories(["new/run"], "output_dir"):
    ...     raise RuntimeError("the run fails")
    >>> os.path.exists("new")
    False
    """
    created = []  # the outermost directory each creation made
    try:
        for directory in sorted({os.fspath(d) for d in directories} - {""}):
            created.append(make_directory(directory, flag, error))
        yield
    except BaseException:
        if not keep():
            for directory in filter(None, created):
                if tf.io.gfile.exists(directory):
                    tf.io.gfile.rmtree(directory)
        raise


# What `tf.train.CheckpointManager.save` (default `checkpoint_name="ckpt"`) writes under a temporary
# name, and renames or removes when it completes: the shards of `ckpt-N` in `ckpt-N_temp/`
# (tensorflow/python/checkpoint/functional_saver.py: `<prefix>_temp/part-*`), and the `checkpoint`
# state file as `checkpoint.tmp<uuid hex>` (file_io.atomic_write_string_to_file).
_INTERRUPTED_CHECKPOINT_SAVE = re.compile(r"ckpt-\d+_temp|checkpoint\.tmp[0-9a-f]{32}")


def remove_interrupted_checkpoint_saves(directory: str | os.PathLike) -> list[str]:
    """Removes from a `tf.train.CheckpointManager`'s `directory` the temporaries that a save killed
    midway left (nothing else removes them, and `tf.io.gfile.glob('dir/*')` lists them); returns
    their paths. Only for the run that alone saves
    there: it removes another run's save in progress."""
    directory = os.fspath(directory)
    leftovers = [
        os.path.join(directory, name)
        for name in tf.io.gfile.listdir(directory)
        if _INTERRUPTED_CHECKPOINT_SAVE.fullmatch(name.rstrip("/"))
    ]
    for path in leftovers:
        (tf.io.gfile.rmtree if tf.io.gfile.isdir(path) else tf.io.gfile.remove)(path)
    return leftovers


def atomic_write_texts(texts: dict[str | os.PathLike, str]) -> None:
    """Writes each `{path: text}` (UTF-8) atomically, as a set: every temporary is written before
    the first rename, so a kill pairs old files with new ones only between the renames.

    Example:
    >>> atomic_write_texts({"predictions.json": "{}", "nbest_predictions.json": "{}"})
    """
    with contextlib.ExitStack() as stack:
        for path, text in texts.items():
            with tf.io.gfile.GFile(stack.enter_context(atomic_output(path)), "w") as f:
                f.write(text)
