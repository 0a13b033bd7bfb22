"""Which checkpoint format a path holds, and where its tensors are."""

from __future__ import annotations

import enum
import os
import re

import tensorflow as tf

from bert_tf.bert_config import CONFIG_FILE
from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.tf_checkpoint_reader import ObjectGraph, encoder_paths, open_reader


class CheckpointFormat(str, enum.Enum):
    TF1 = "tf1"  # google-research/bert: bert_model.ckpt.{index,data-*}, TF1 variable names
    MODEL_GARDEN = "model_garden"  # tf.train.Checkpoint(encoder=tfm.nlp.networks.BertEncoder)
    BERT_TF = "bert_tf"  # tf.train.Checkpoint(encoder=BertEncoder) or (model=BertPretrainer, ...)
    KERAS = "keras"  # a bert_tf model saved as a .keras file
    SAFETENSORS = "hf_safetensors"  # Hugging Face model.safetensors, or its shards and their index
    PYTORCH = "hf_pytorch"  # Hugging Face pytorch_model.bin, or its shards and their index
    TF_HUB = "tf_hub"  # a BERT encoder SavedModel in the TF Hub layout (`hub_saved_model`)


# Files that name a format by themselves, in the order a directory is searched.
_FILES = (
    ("model.safetensors", CheckpointFormat.SAFETENSORS),
    ("model.safetensors.index.json", CheckpointFormat.SAFETENSORS),
    ("pytorch_model.bin", CheckpointFormat.PYTORCH),
    ("pytorch_model.bin.index.json", CheckpointFormat.PYTORCH),
)
# File name endings, the index of a sharded Hugging Face checkpoint (`*.index.json`) included.
_SUFFIXES = {
    ".safetensors": CheckpointFormat.SAFETENSORS,
    ".safetensors.index.json": CheckpointFormat.SAFETENSORS,
    ".bin": CheckpointFormat.PYTORCH,
    ".bin.index.json": CheckpointFormat.PYTORCH,
    ".keras": CheckpointFormat.KERAS,
}
# a TF checkpoint's files, after its prefix
_TF_FILE = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")
HUGGING_FACE_FORMATS = (CheckpointFormat.SAFETENSORS, CheckpointFormat.PYTORCH)
SAVED_MODEL_FILE = "saved_model.pb"


def detect_format(path: str | os.PathLike) -> tuple[CheckpointFormat, str]:
    """The format of the checkpoint at `path`, and the file or checkpoint prefix to read.

    Args:
        path: a checkpoint prefix (`.../bert_model.ckpt`), one of its files (`.index`,
            `.data-*`, `.meta`), a `.safetensors`, `.bin` or `.keras` file, a sharded Hugging
            Face checkpoint's `*.index.json`, or a directory holding one of these (a
            `checkpoint` state file picks the latest TF checkpoint) or a TF Hub encoder
            SavedModel (the directory is its location).

    Returns:
        `(format, location)`.

    Raises:
        CheckpointError: none at `path`, several, no index file, or no BERT encoder.
    """
    path = os.fspath(path)
    # A prefix first: ram:// calls any prefix of a file's name a directory.
    if tf.io.gfile.isdir(path) and not tf.io.gfile.exists(path + ".index"):
        return _detect_in_directory(path)
    suffix = next((suffix for suffix in _SUFFIXES if path.endswith(suffix)), None)
    if suffix is not None:
        if not tf.io.gfile.exists(path):
            raise CheckpointError(f"{path}: no such file")
        return _SUFFIXES[suffix], path
    prefix = _tf_prefix(path)
    return _tf_format(prefix), prefix


def stored_config_file(checkpoint_format: CheckpointFormat, location: str) -> str | None:
    """The file holding the config stored with the checkpoint at `location` (`detect_format`'s), or
    None: the `.keras` file itself, Hugging Face's `config.json` beside it, or the
    `bert_config.json` beside a TF checkpoint."""
    if checkpoint_format is CheckpointFormat.KERAS:
        return location
    name = "config.json" if checkpoint_format in HUGGING_FACE_FORMATS else CONFIG_FILE
    path = os.path.join(os.path.dirname(location), name)
    return path if tf.io.gfile.exists(path) else None


def hugging_face_config_file(checkpoint_format: CheckpointFormat, location: str) -> str | None:
    """The `config.json` beside a Hugging Face checkpoint (`stored_config_file`); else None."""
    return (
        stored_config_file(checkpoint_format, location)
        if checkpoint_format in HUGGING_FACE_FORMATS
        else None
    )


def checkpoint_files(path: str | os.PathLike) -> list[str]:
    """The files that reading the checkpoint at `path` may read.

    Args:
        path: the checkpoint, in any form `detect_format` takes.

    Returns:
        Its tensor and index files (a TF checkpoint's `checkpoint` state file included) and its
        stored config, those that exist, sorted.

    Raises:
        CheckpointError: none at `path`, several, no index file, or no BERT encoder.
    """
    return files_of(*detect_format(path))


def files_of(checkpoint_format: CheckpointFormat, location: str) -> list[str]:
    """`checkpoint_files` of a checkpoint already found.

    Args:
        checkpoint_format: its format, as `detect_format` returns it.
        location: its file, prefix or directory, as `detect_format` returns it.

    Returns:
        The files that reading it may read, those that exist, sorted.
    """
    directory = os.path.dirname(location)
    if checkpoint_format is CheckpointFormat.TF_HUB:
        patterns = (SAVED_MODEL_FILE, "variables/variables.*", "assets/vocab.txt")
        return sorted(
            f for pattern in patterns for f in tf.io.gfile.glob(os.path.join(location, pattern))
        )
    if checkpoint_format is CheckpointFormat.KERAS:
        files = [location]
    elif checkpoint_format in HUGGING_FACE_FORMATS:
        patterns = ("*.safetensors", "*.bin", "*.index.json")  # shards and their index
        files = [
            f for pattern in patterns for f in tf.io.gfile.glob(os.path.join(directory, pattern))
        ]
    else:
        files = [
            f for f in tf.io.gfile.glob(location + ".*") if _TF_FILE.fullmatch(f[len(location) :])
        ]
        state = os.path.join(directory, "checkpoint")
        files += [state] if tf.io.gfile.exists(state) else []
    config = stored_config_file(checkpoint_format, location)
    return sorted(set(files + ([config] if config else [])))


def _detect_in_directory(directory: str) -> tuple[CheckpointFormat, str]:
    if tf.io.gfile.exists(os.path.join(directory, SAVED_MODEL_FILE)):
        return CheckpointFormat.TF_HUB, directory
    for name, checkpoint_format in _FILES:
        if tf.io.gfile.exists(os.path.join(directory, name)):
            return checkpoint_format, os.path.join(directory, name)
    candidates = [os.path.join(directory, "bert_model.ckpt")]
    state = tf.train.get_checkpoint_state(directory)  # a `checkpoint` file names the latest
    indexes = sorted(tf.io.gfile.glob(os.path.join(directory, "*.index")))
    if state is not None:
        # Saver writes absolute paths; a copied or moved directory must not read the original.
        candidates.insert(0, os.path.join(directory, os.path.basename(state.model_checkpoint_path)))
    elif len(indexes) > 1:
        names = ", ".join(os.path.basename(index).removesuffix(".index") for index in indexes)
        raise CheckpointError(
            f"{directory}: {len(indexes)} checkpoints ({names}) and no 'checkpoint' file "
            "naming the latest: pass the prefix of the one to read"
        )
    if len(indexes) == 1:
        candidates.append(indexes[0].removesuffix(".index"))
    for prefix in candidates:
        if tf.io.gfile.exists(prefix + ".index"):
            return _tf_format(prefix), prefix
    keras_files = sorted(tf.io.gfile.glob(os.path.join(directory, "*.keras")))
    if len(keras_files) == 1:
        return CheckpointFormat.KERAS, keras_files[0]
    if keras_files:
        names = ", ".join(os.path.basename(path) for path in keras_files)
        raise CheckpointError(
            f"{directory}: {len(keras_files)} .keras files ({names}): pass the one to read"
        )
    data_files = tf.io.gfile.glob(os.path.join(directory, "*.data-*"))
    if data_files:
        _tf_prefix(data_files[0])  # raises: the index file is missing
    raise CheckpointError(
        f"{directory}: no checkpoint found (looked for model.safetensors, "
        "pytorch_model.bin, their *.index.json, a 'checkpoint' file, one *.index "
        "or one *.keras file)"
    )


def _tf_prefix(path: str) -> str:
    """The prefix of a TF checkpoint given as its prefix, `.index`, `.data-*` or `.meta` file."""
    prefix = _TF_FILE.sub("", path)
    if tf.io.gfile.exists(prefix + ".index"):
        return prefix
    if tf.io.gfile.glob(prefix + ".data-*"):
        raise CheckpointError(
            f"{prefix}: index file {prefix}.index is missing "
            "(the .data files cannot be read without it)"
        )
    raise CheckpointError(f"{path}: no such checkpoint (no {prefix}.index)")


def _tf_format(prefix: str) -> CheckpointFormat:
    reader = open_reader(prefix)
    if not ObjectGraph.present(reader):
        if any(name.startswith("bert/") for name in reader.get_variable_to_shape_map()):
            return CheckpointFormat.TF1
        raise CheckpointError(
            f"{prefix}: a name-based checkpoint without bert/ variables "
            "is not a google-research/bert checkpoint"
        )
    graph = ObjectGraph(reader)
    paths = encoder_paths(graph)
    children = graph.children(graph.child(0, paths[1])) if paths else {}
    if "_transformer_layers" in children:
        return CheckpointFormat.MODEL_GARDEN
    if "embeddings" in children and "pooler" in children:
        return CheckpointFormat.BERT_TF
    raise CheckpointError(
        f"{prefix}: object-based checkpoint without a BERT encoder under "
        "'encoder' or 'model' (root holds: "
        f"{', '.join(sorted(graph.children(0)))})"
    )
