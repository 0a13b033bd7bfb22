"""bert_tf's own checkpoints and `.keras` files.

The checkpoints are `tf.train.Checkpoint(encoder=BertEncoder)` or `(model=BertPretrainer)`
(convert), `(model=task model)` (fine-tuning's best weights) and `(model=BertPretrainer,
encoder=its encoder, optimizer=...)` (pretraining; the optimizer's `iterations` is the global step).
"""

from __future__ import annotations

import collections
import zipfile

import keras
import numpy as np
import tensorflow as tf

from bert_tf import text_files
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import tf1_names
from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.tf_checkpoint_reader import (
    ObjectGraph,
    encoder_paths,
    open_reader,
    read_tensor,
    unread_variables,
)
from bert_tf.models.bert_encoder import BertEncoder


def _match(graph: ObjectGraph, node: int, obj) -> dict[str, object]:
    """Checkpoint key -> live object, pairing children as `tf.train.Checkpoint.restore` does."""
    pairs, seen, queue = {}, set(), collections.deque([(node, obj)])
    while queue:
        node, obj = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        key = graph.variable_key(node)
        if key is not None:
            pairs[key] = obj
            continue
        live = tf.train.TrackableView.children(obj)
        queue.extend(
            (child, live[name]) for name, child in graph.children(node).items() if name in live
        )
    return pairs


# The head layer of each bert_tf task model by model type (`task_heads.TASK_MODELS`): the model's
# attribute, and its child in a checkpoint's `model` part.
HEAD_LAYERS = {
    "classifier": "classifier",
    "span": "span_classifier",
    "token": "token_classifier",
    "multiple_choice": "choice_scorer",
}
# The model types whose heads google-research/bert has
# names for, and their roles (`tf1_names.TASK_HEADS`).
TF1_ROLES = {"classifier": "classifier", "span": "squad"}


def _tf1_head_tensors(heads: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The sentence-classifier and span heads among `heads` (by model type) under their TF1 names,
    so that `LoadReport.heads` holds them, as for a TF1 checkpoint."""
    tensors = {}
    for name, role in TF1_ROLES.items():
        if name in heads:
            tensors.update(tf1_names.task_head_tensors(role, heads[name]))
    return tensors


def _checkpoint_head_paths(graph: ObjectGraph, part: str) -> dict[str, str]:
    """The object path of the head layer (with weights) of the task model saved as `part`, by model
    type; empty for an encoder or a pretrainer."""
    paths = {name: f"{part}/{layer}" for name, layer in HEAD_LAYERS.items()}
    return {
        name: path
        for name, path in paths.items()
        if graph.child(0, path) is not None and graph.variable_paths(path)
    }


def _layer_weights(reader, prefix: str, graph: ObjectGraph, path: str) -> dict[str, np.ndarray]:
    """The weights of the Keras layer at object path `path`, by name (`kernel`, `bias`)."""
    # Keras' Dense keeps its kernel as `_kernel`.
    return {
        name.rsplit("/", 1)[1].lstrip("_"): read_tensor(reader, prefix, key)
        for key, name in graph.variable_paths(path).items()
    }


def _keras_head_layers(model) -> dict[str, keras.layers.Layer]:
    """A loaded task model's head layer, by model type; empty for an encoder or a pretrainer."""
    return {
        name: getattr(model, layer) for name, layer in HEAD_LAYERS.items() if hasattr(model, layer)
    }


def _keras_layer_weights(layer: keras.layers.Layer) -> dict[str, np.ndarray]:
    """The weights of a loaded Keras layer, by name (`kernel`, `bias`)."""
    return {variable.name: variable.numpy() for variable in layer.weights}


def saved_heads(location: str, keras_file: bool) -> dict[str, dict[str, np.ndarray]]:
    """The head layer's weights, by name (`kernel`, `bias`), of the bert_tf task model saved at
    `location` (a checkpoint prefix, or a `.keras` file), keyed by its model type; empty for an
    encoder or a pretrainer."""
    if keras_file:
        layers = _keras_head_layers(_load_keras_file(location))
        return {name: _keras_layer_weights(layer) for name, layer in layers.items()}
    reader = open_reader(location)
    graph = ObjectGraph(reader)
    paths = _checkpoint_head_paths(graph, encoder_paths(graph)[0])
    return {name: _layer_weights(reader, location, graph, path) for name, path in paths.items()}


def read_bert_tf_checkpoint(prefix: str, model) -> CheckpointWeights:
    """Reads a `tf.train.Checkpoint` of ours by matching its object graph against `model`.

    The checkpoint's `encoder` or `model` part may hold a `BertEncoder`, a `BertPretrainer`
    or a task model with an `encoder`; `model` may be any of these too. Two whole models
    are matched with each other, otherwise the two encoders are.
    """
    reader = open_reader(prefix)
    graph = ObjectGraph(reader)
    part, encoder = encoder_paths(graph)
    table = tf1_names.tf1_variables(model)
    names = {id(entry.variable): name for name, entry in table.items()}
    if part != encoder and not isinstance(model, BertEncoder):
        pairs = _match(graph, graph.child(0, part), model)
    else:
        pairs = _match(graph, graph.child(0, encoder), tf1_names.encoder_of(model))

    weights = CheckpointWeights(prefix, CheckpointFormat.BERT_TF.value, tensors={})
    for key, obj in pairs.items():
        name = names.get(id(obj))
        if name is not None:
            weights.tensors[name] = table[name].to_tf1(read_tensor(reader, prefix, key))
    read = {key for key, obj in pairs.items() if id(obj) in names}
    head_paths = _checkpoint_head_paths(graph, part)
    weights.tensors.update(
        _tf1_head_tensors(
            {
                name: _layer_weights(reader, prefix, graph, path)
                for name, path in head_paths.items()
                if name in TF1_ROLES
            }
        )
    )
    # Every head counts as read: a task model of its type takes it (`saved_heads`), and the
    # fine-tuning driver says whether it did.
    read.update(key for path in head_paths.values() for key in graph.variable_paths(path))
    weights.unexpected, weights.unused, weights.skipped = unread_variables(
        graph, read, part, encoder
    )
    return weights


def _load_keras_file(path: str):
    try:
        return keras.saving.load_model(path, compile=False)
    except Exception as e:  # Keras raises many types for a bad archive.
        raise CheckpointError(
            f"{path}: cannot load the .keras file ({type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else 'corrupt'})"
        ) from None


def read_keras_file(path: str) -> CheckpointWeights:
    """Reads a bert_tf model saved with `model.save("....keras")`, a sentence-classifier or span
    head under its TF1 names."""
    model = _load_keras_file(path)
    table = tf1_names.tf1_variables(model)
    heads = {name: layer for name, layer in _keras_head_layers(model).items() if name in TF1_ROLES}
    tensors = {name: entry.numpy() for name, entry in table.items()}
    tensors.update(
        _tf1_head_tensors({name: _keras_layer_weights(layer) for name, layer in heads.items()})
    )
    mapped = {id(entry.variable) for entry in table.values()} | {
        id(variable) for layer in heads.values() for variable in layer.weights
    }
    return CheckpointWeights(
        path,
        CheckpointFormat.KERAS.value,
        tensors=tensors,
        unused=[v.path for v in model.weights if id(v) not in mapped],
    )


def _encoder_config(node):
    """The `config` of the first serialized `BertEncoder` in a Keras config tree."""
    if isinstance(node, dict):
        if node.get("registered_name") == "bert_tf>BertEncoder":
            return node["config"]
        node = list(node.values())
    if isinstance(node, list):
        for child in node:
            if (found := _encoder_config(child)) is not None:
                return found
    return None


def keras_file_config(path: str) -> BertConfig | None:
    """The encoder's `BertConfig` from a `.keras` file's `config.json`, without loading weights."""
    source = f"{path}:config.json"
    try:
        with tf.io.gfile.GFile(path, "rb") as f, zipfile.ZipFile(f) as archive:  # gs:// too
            data = archive.read("config.json")
    except (OSError, KeyError, zipfile.BadZipFile, tf.errors.OpError) as e:
        raise CheckpointError(
            f"{path}: not a readable .keras file ({type(e).__name__}: {e})"
        ) from None
    text = text_files.decode_utf8(data, source, CheckpointError)
    config = text_files.parse_json(text, source, CheckpointError)
    found = _encoder_config(config)
    if found is None:
        return None
    fields = {k: v for k, v in found.items() if k in BertConfig.field_names()}
    # its extra keys back to extra
    return BertConfig.from_dict({**fields, **found.get("extra", {})}, source=source)
