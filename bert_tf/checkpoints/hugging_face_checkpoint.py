"""Hugging Face BERT checkpoints: `model.safetensors` or `pytorch_model.bin`, and `config.json`.

A sharded checkpoint (`model.safetensors.index.json` or `pytorch_model.bin.index.json`,
whose `weight_map` names each tensor's shard file) is read shard by shard.

Both the `bert.`-prefixed layout (`BertForPreTraining`, `BertForMaskedLM`, task models)
and the bare `BertModel` layout are read. Linear weights are `[out, in]` in PyTorch and
are transposed into TF1's `[in, out]` kernels.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import re

import numpy as np
import tensorflow as tf

from bert_tf import text_files
from bert_tf.bert_config import BertConfig, ConfigError
from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.layers.initializers import LAYER_NORM_EPSILON

# Modules whose `weight` is stored as in TF1 (`[labels, hidden]`), named `output_weights`.
_OUTPUT_LAYERS = {
    "cls.seq_relationship": "cls/seq_relationship/",
    "classifier": "",
    "qa_outputs": "cls/squad/",
}
# Buffers and tied copies: not weights of their own.
_TIED = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}
# Transformers' id2label when a model names no classes
_PLACEHOLDER_LABEL = re.compile(r"LABEL_\d+")


def _tf1_name(name: str) -> tuple[str, bool]:
    """(TF1 name, transpose) for a Hugging Face name without its `bert.` prefix."""
    module, _, parameter = name.rpartition(".")
    if module in _OUTPUT_LAYERS:
        return _OUTPUT_LAYERS[module] + (
            "output_weights" if parameter == "weight" else "output_bias"
        ), False
    if name == "cls.predictions.bias":
        return "cls/predictions/output_bias", False
    path = re.sub(r"\blayer\.(\d+)", r"layer_\1", module).replace(".", "/")
    if not path.startswith("cls/"):
        path = "bert/" + path
    if path.endswith("LayerNorm"):
        return f"{path}/{'gamma' if parameter in ('weight', 'gamma') else 'beta'}", False
    if path.endswith("_embeddings"):
        return path, False
    return f"{path}/{'kernel' if parameter == 'weight' else 'bias'}", parameter == "weight"


def _load_state_dict(path: str, checkpoint_format: CheckpointFormat) -> dict[str, np.ndarray]:
    """The tensors of one `.safetensors` or `.bin` file, read through `tf.io.gfile` (gs:// too)."""
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
    except tf.errors.OpError as e:
        raise CheckpointError(f"{path}: cannot read ({e.message.splitlines()[0]})") from None
    try:
        if checkpoint_format is CheckpointFormat.SAFETENSORS:
            from safetensors.numpy import load

            return load(data)
        import torch  # Only .bin needs torch; weights_only refuses arbitrary pickled objects.

        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        return {
            name: (tensor.float() if tensor.is_floating_point() else tensor).numpy()
            for name, tensor in state.items()
        }
    except ImportError as e:
        raise CheckpointError(f"{path}: reading it needs {e.name} (pip install {e.name})") from None
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"{path}: holds pickled objects other than tensors, refused "
            "(torch.load with weights_only=True)"
        ) from None
    except Exception as e:  # safetensors and torch raise their own error types.
        raise CheckpointError(
            f"{path}: cannot read ({type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else 'truncated or corrupt'})"
        ) from None


def _load_shards(index: str, checkpoint_format: CheckpointFormat) -> dict[str, np.ndarray]:
    """The tensors of a sharded checkpoint, from the shard files its `*.index.json` names."""
    try:
        # tensor name -> shard file name
        weight_map = text_files.read_json(index, CheckpointError)["weight_map"]
        shards = sorted(set(weight_map.values()))
    except (KeyError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{index}: not a readable shard index ({type(e).__name__}: {e})"
        ) from None
    state = {}
    for shard in shards:
        path = os.path.join(os.path.dirname(index), shard)
        if not tf.io.gfile.exists(path):
            raise CheckpointError(f"{index}: shard {shard} is missing")
        state.update(_load_state_dict(path, checkpoint_format))
    if missing := sorted(set(weight_map) - set(state)):
        raise CheckpointError(
            f"{index}: {len(missing)} tensors missing from their shards, e.g. {missing[0]}"
        )
    return state


def read_hugging_face_checkpoint(
    path: str, checkpoint_format: CheckpointFormat
) -> CheckpointWeights:
    """Reads `model.safetensors` or `pytorch_model.bin`, or their shards given their
    `*.index.json`, into TF1 names and layouts."""
    state = (
        _load_shards(path, checkpoint_format)
        if path.endswith(".index.json")
        else _load_state_dict(path, checkpoint_format)
    )
    prefixed = any(name.startswith("bert.") for name in state)
    weights = CheckpointWeights(path, checkpoint_format.value, tensors={})
    for name, value in sorted(state.items()):
        bare = name.removeprefix("bert.")
        if name.endswith("position_ids") or (
            name in _TIED and np.array_equal(value, state.get(_TIED[name]))
        ):
            weights.skipped.append(name)
        elif (
            name.startswith("bert.")
            or not prefixed
            or bare.split(".")[0] in ("cls", *_OUTPUT_LAYERS)
        ):
            tf1_name, transpose = _tf1_name(bare)
            weights.tensors[tf1_name] = value.T if transpose else value
        else:
            weights.unused.append(name)
    return weights


def _read_json(path: str) -> dict:
    """The JSON object in the Hugging Face `config.json` at `path`."""
    values = text_files.read_json(path, ConfigError)
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: must be a JSON object, got {type(values).__name__}")
    return values


def read_hugging_face_config(path: str | os.PathLike) -> BertConfig:
    """A Hugging Face BERT `config.json` as a `BertConfig` (google-research/bert field names)."""
    path = os.fspath(path)
    values = _read_json(path)
    if values.get("model_type", "bert") != "bert":
        raise ConfigError(f"{path}: model_type {values['model_type']!r} is not 'bert'")
    if values.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(
            f"{path}: position_embedding_type {values['position_embedding_type']!r} "
            "is not supported (only 'absolute')"
        )
    eps = values.get("layer_norm_eps", LAYER_NORM_EPSILON)
    if not math.isclose(eps, LAYER_NORM_EPSILON, rel_tol=1e-6):
        raise ConfigError(
            f"{path}: layer_norm_eps {eps} is not supported (bert_tf uses {LAYER_NORM_EPSILON})"
        )
    return BertConfig.from_dict(
        {k: v for k, v in values.items() if k in BertConfig.field_names()}, source=path
    )


def read_hugging_face_labels(path: str | os.PathLike) -> tuple[str, ...] | None:
    """The class names of a Hugging Face classifier in
    output order (`id2label` of its `config.json`).

    None when the config names none, or only Transformers' placeholders `LABEL_0`, `LABEL_1`, ...
    """
    id2label = _read_json(os.fspath(path)).get("id2label") or {}
    labels = tuple(id2label[key] for key in sorted(id2label, key=int))
    return None if all(_PLACEHOLDER_LABEL.fullmatch(label) for label in labels) else labels


def read_hugging_face_architectures(path: str | os.PathLike) -> tuple[str, ...]:
    """The model classes a Hugging Face `config.json` names in `architectures`."""
    return tuple(_read_json(os.fspath(path)).get("architectures") or ())
