"""bert_tf's own checkpoints and `.keras` files.

The checkpoints are `tf.train.Checkpoint(encoder=BertEncoder)` or `(model=BertPretrainer)`
(convert), `(model=task model)` (fine-tuning's best weights) and `(model=BertPretrainer,
encoder=its encoder, optimizer=...)` (pretraining; the optimizer's `iterations` is the global step).
"""

from __future__ import annotations

import collections
import json
import zipfile

import keras
import numpy as np
import tensorflow as tf

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import tf1_names
from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.tf_checkpoint_reader import (ObjectGraph, encoder_paths, open_reader,
                                                      read_tensor, unread_variables)
from bert_tf.models.bert_encoder import BertEncoder


def _match(graph: ObjectGraph, node: int, obj) -> dict[str, object]:
    """Checkpoint key -> live object, pairing named children as `tf.train.Checkpoint.restore` does."""
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
        queue.extend((child, live[name]) for name, child in graph.children(node).items() if name in live)
    return pairs


# The head layers of our task models that google-research/bert has names for, by role.
_TF1_HEAD_LAYERS = {"classifier": "classifier", "squad": "span_classifier"}


def _read_unmatched_heads(reader, prefix: str, graph: ObjectGraph, part: str, read: set[str],
                          tensors: dict) -> list[str]:
    """Adds to `tensors`, under their TF1 names, the sentence-classifier and span heads of a
    fine-tuned model that the model being filled has no place for (so that `LoadReport.heads`
    holds them, as for a TF1 checkpoint); returns their checkpoint keys."""
    keys = []
    for role, layer in _TF1_HEAD_LAYERS.items():
        path = f"{part}/{layer}"
        variables = graph.variable_paths(path) if graph.child(0, path) is not None else {}
        if variables and not read.intersection(variables):
            tensors.update(tf1_names.task_head_tensors(role, layer_weights(reader, prefix, graph, path)))
            keys.extend(variables)
    return keys


def layer_weights(reader, prefix: str, graph: ObjectGraph, path: str) -> dict[str, np.ndarray] | None:
    """The weights of the Keras layer at object path `path`, by name (`kernel`, `bias`); None if
    the checkpoint has no such layer."""
    if graph.child(0, path) is None:
        return None
    # Keras' Dense keeps its kernel as `_kernel`.
    return {name.rsplit("/", 1)[1].lstrip("_"): read_tensor(reader, prefix, key)
            for key, name in graph.variable_paths(path).items()}


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
    read.update(_read_unmatched_heads(reader, prefix, graph, part, read, weights.tensors))
    weights.unexpected, weights.unused, weights.skipped = unread_variables(graph, read, part, encoder)
    return weights


def _load_keras_file(path: str):
    try:
        return keras.saving.load_model(path, compile=False)
    except Exception as e:  # Keras raises many types for a bad archive.
        raise CheckpointError(f"{path}: cannot load the .keras file ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else 'corrupt'})") from None


def read_keras_file(path: str) -> CheckpointWeights:
    """Reads a bert_tf model saved with `model.save("....keras")`."""
    model = _load_keras_file(path)
    table = tf1_names.tf1_variables(model)
    mapped = {id(entry.variable) for entry in table.values()}
    return CheckpointWeights(path, CheckpointFormat.KERAS.value,
                             tensors={name: entry.numpy() for name, entry in table.items()},
                             unused=[v.path for v in model.weights if id(v) not in mapped])


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
    try:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json"))
    except (OSError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: not a readable .keras file ({type(e).__name__}: {e})") from None
    found = _encoder_config(config)
    if found is None:
        return None
    return BertConfig.from_dict({k: v for k, v in found.items() if k in BertConfig.field_names()},
                                source=f"{path}:config.json")
