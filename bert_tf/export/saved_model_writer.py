"""Writing a SavedModel directory atomically: a temporary sibling, then a rename."""

from __future__ import annotations

import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.saved_model import fingerprinting_utils

from bert_tf.errors import UserInputError
from bert_tf.io_utils import atomic_directory, atomic_output


def export_dir_problem(path: str) -> str | None:
    """Why an export may not be written to `path`, or
    None: it is absent, empty or an earlier SavedModel.

    An export replaces what is there: a directory of anything else (say a run's
    `--output_dir`, or the checkpoint's own directory) would be deleted.
    """
    if not tf.io.gfile.exists(path):
        return None
    if not tf.io.gfile.isdir(path):
        return "is a file, not a directory"
    if tf.io.gfile.listdir(path) and not tf.saved_model.contains_saved_model(path):
        return (
            "holds files that are not a SavedModel, which the export would replace; "
            "choose an empty or new directory"
        )
    return None


def check_export_dir(export_dir: str | os.PathLike) -> None:
    """Raises ValueError for `--export_dir` unless it can take an export (`export_dir_problem`)."""
    path = os.fspath(export_dir).rstrip("/")
    problem = export_dir_problem(path)
    if problem:
        raise UserInputError(f"`export_dir`={path}: {problem}")


def save_atomically(
    module: tf.Module,
    export_dir: str | os.PathLike,
    signatures: dict,
    method_names: dict[str, str] | None = None,
) -> str:
    """`tf.saved_model.save` into a temporary directory beside `export_dir`, then moves it there.

    Readers see the old export, none, or the complete new one; an existing export
    at `export_dir` is replaced (`io_utils.replace_directory`), anything else there is
    refused (`check_export_dir`). `method_names` maps signature names to the
    `SignatureDef.method_name` they get (`set_method_names`). Returns `export_dir` as a string.
    """
    check_export_dir(export_dir)
    export_dir = os.fspath(export_dir).rstrip("/")
    with atomic_directory(export_dir) as tmp:
        tf.saved_model.save(module, tmp, signatures=signatures)
        if method_names:
            set_method_names(tmp, method_names)
    return export_dir


def set_method_names(saved_model_dir: str, method_names: dict[str, str]) -> None:
    """Sets the `method_name` of the named signatures in `saved_model_dir/saved_model.pb`.

    `tf.saved_model.save` marks every signature `tensorflow/serving/predict`; TF Serving's
    Classify and Regress APIs serve only signatures marked `tensorflow/serving/classify` or
    `.../regress` (its Predict API takes all three). `tf.saved_model.load` ignores the
    mark. The fingerprint, a hash of `saved_model.pb`, is written again. Call it on a
    directory no reader sees yet (`save_atomically`'s temporary).
    """
    path = os.path.join(saved_model_dir, "saved_model.pb")
    with tf.io.gfile.GFile(path, "rb") as f:
        saved_model = saved_model_pb2.SavedModel.FromString(f.read())
    signature_defs = saved_model.meta_graphs[0].signature_def
    for name, method_name in method_names.items():
        if name not in signature_defs:
            raise KeyError(f"{saved_model_dir} has no signature {name!r}")
        signature_defs[name].method_name = method_name
    # a new file: ram:// "wb" appends
    with atomic_output(path) as tmp, tf.io.gfile.GFile(tmp, "wb") as f:
        f.write(saved_model.SerializeToString())
    if tf.io.gfile.exists(os.path.join(saved_model_dir, "fingerprint.pb")):
        # what tf.saved_model.save calls to write it
        fingerprinting_utils.write_fingerprint(saved_model_dir)
