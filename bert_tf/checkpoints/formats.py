"""Which checkpoint format a path holds, and where its tensors are."""

from __future__ import annotations

import enum
import os
import re

import tensorflow as tf

from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.tf_checkpoint_reader import ObjectGraph, encoder_paths, open_reader


class CheckpointFormat(str, enum.Enum):
    TF1 = "tf1"  # google-research/bert: bert_model.ckpt.{index,data-*}, TF1 variable names
    MODEL_GARDEN = "model_garden"  # tf.train.Checkpoint(encoder=tfm.nlp.networks.BertEncoder)
    BERT_TF = "bert_tf"  # tf.train.Checkpoint(encoder=BertEncoder) or (model=BertPretrainer, ...)
    KERAS = "keras"  # a bert_tf model saved as a .keras file
    SAFETENSORS = "hf_safetensors"  # Hugging Face model.safetensors
    PYTORCH = "hf_pytorch"  # Hugging Face pytorch_model.bin


# Files that name a format by themselves, in the order a directory is searched.
_FILES = (("model.safetensors", CheckpointFormat.SAFETENSORS),
          ("pytorch_model.bin", CheckpointFormat.PYTORCH))
_SUFFIXES = {".safetensors": CheckpointFormat.SAFETENSORS, ".bin": CheckpointFormat.PYTORCH,
             ".keras": CheckpointFormat.KERAS}
_DATA_FILE = re.compile(r"\.data-\d{5}-of-\d{5}$")


def detect_format(path: str | os.PathLike) -> tuple[CheckpointFormat, str]:
    """`(format, location)`: the file or checkpoint prefix to read at `path`.

    `path` is a checkpoint prefix (`.../bert_model.ckpt`), one of its files, a
    `.safetensors`, `.bin` or `.keras` file, or a directory holding one of these (a
    `checkpoint` state file picks the latest TF checkpoint).
    """
    path = os.fspath(path)
    if tf.io.gfile.isdir(path):
        return _detect_in_directory(path)
    suffix = os.path.splitext(path)[1]
    if suffix in _SUFFIXES:
        if not tf.io.gfile.exists(path):
            raise CheckpointError(f"{path}: no such file")
        return _SUFFIXES[suffix], path
    prefix = _tf_prefix(path)
    return _tf_format(prefix), prefix


def _detect_in_directory(directory: str) -> tuple[CheckpointFormat, str]:
    for name, checkpoint_format in _FILES:
        if tf.io.gfile.exists(os.path.join(directory, name)):
            return checkpoint_format, os.path.join(directory, name)
    candidates = [os.path.join(directory, "bert_model.ckpt")]
    state = tf.train.get_checkpoint_state(directory)  # a `checkpoint` file names the latest
    if state is not None:
        # Saver writes absolute paths; a copied or moved directory must not read the original.
        candidates.insert(0, os.path.join(directory, os.path.basename(state.model_checkpoint_path)))
    indexes = tf.io.gfile.glob(os.path.join(directory, "*.index"))
    if len(indexes) == 1:
        candidates.append(indexes[0].removesuffix(".index"))
    for prefix in candidates:
        if tf.io.gfile.exists(prefix + ".index"):
            return _tf_format(prefix), prefix
    keras_files = tf.io.gfile.glob(os.path.join(directory, "*.keras"))
    if len(keras_files) == 1:
        return CheckpointFormat.KERAS, keras_files[0]
    data_files = tf.io.gfile.glob(os.path.join(directory, "*.data-*"))
    if data_files:
        _tf_prefix(data_files[0])  # raises: the index file is missing
    raise CheckpointError(f"{directory}: no checkpoint found (looked for model.safetensors, "
                          "pytorch_model.bin, a 'checkpoint' file, one *.index or one *.keras file)")


def _tf_prefix(path: str) -> str:
    """The prefix of a TF checkpoint given as its prefix, `.index` or `.data-*` file."""
    prefix = _DATA_FILE.sub("", path.removesuffix(".index"))
    if tf.io.gfile.exists(prefix + ".index"):
        return prefix
    if tf.io.gfile.glob(prefix + ".data-*"):
        raise CheckpointError(f"{prefix}: index file {prefix}.index is missing "
                              "(the .data files cannot be read without it)")
    raise CheckpointError(f"{path}: no such checkpoint (no {prefix}.index)")


def _tf_format(prefix: str) -> CheckpointFormat:
    reader = open_reader(prefix)
    if not ObjectGraph.present(reader):
        if any(name.startswith("bert/") for name in reader.get_variable_to_shape_map()):
            return CheckpointFormat.TF1
        raise CheckpointError(f"{prefix}: a name-based checkpoint without bert/ variables "
                              "is not a google-research/bert checkpoint")
    graph = ObjectGraph(reader)
    paths = encoder_paths(graph)
    children = graph.children(graph.child(0, paths[1])) if paths else {}
    if "_transformer_layers" in children:
        return CheckpointFormat.MODEL_GARDEN
    if "embeddings" in children and "pooler" in children:
        return CheckpointFormat.BERT_TF
    raise CheckpointError(f"{prefix}: object-based checkpoint without a BERT encoder under "
                          "'encoder' or 'model' (root holds: "
                          f"{', '.join(sorted(graph.children(0)))})")
