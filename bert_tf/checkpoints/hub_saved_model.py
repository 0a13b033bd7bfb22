"""BERT encoder SavedModels in the TF Hub layout, read as checkpoints.

Two writers make them: Model Garden's `export_tfhub` (the TF Hub and Kaggle BERTs; a
tf_keras functional model whose encoder is the root's `layer_with_weights-0`) and bert_tf's
`export_hub_pair` (`EncoderExport`: its encoder's variables as the list `variables`, its
pretrainer's as `mlm/model_variables`, in the order the Keras model lists them). Both give
the masked-LM head where the export has `mlm`. Both keep
their weights as a TF2 checkpoint in `variables/variables`, read here by object path, and
the vocab in `assets/vocab.txt`. `do_lower_case` and bert_tf's config are root variables.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import tf1_names
from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights
from bert_tf.checkpoints.formats import SAVED_MODEL_FILE, CheckpointFormat
from bert_tf.checkpoints.model_garden_checkpoint import model_garden_encoder_tensors
from bert_tf.checkpoints.tf_checkpoint_reader import ObjectGraph, open_reader, read_tensor
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer

_MODEL_GARDEN_ENCODER = (
    "layer_with_weights-0"  # export_tfhub's encoder, the functional model's only layer with weights
)
# With `with_mlm`, the same encoder as its pretrainer's
# `encoder_network`, beside the pretrainer's `masked_lm`.
_MODEL_GARDEN_PRETRAINER_ENCODER = f"mlm/{_MODEL_GARDEN_ENCODER}/encoder_network"
_OURS_ENCODER, _OURS_PRETRAINER = "variables", "mlm/model_variables"
_RECORDED = ("do_lower_case", "bert_config")  # root variables that describe the model
_NOT_WEIGHTS = (*_RECORDED, "save_counter")
# Ops that tell the transformer's activation in a graph (the pooler's Tanh is in every BERT).
_ACTIVATION_OPS = (("Erf", "gelu"), ("Pow", "gelu_approximate"), ("Relu", "relu"))


def variables_prefix(directory: str) -> str:
    """The prefix of the SavedModel's variables checkpoint."""
    return os.path.join(directory, "variables", "variables")


def hub_vocab_file(directory: str) -> str | None:
    """The SavedModel's `assets/vocab.txt`, or None."""
    path = os.path.join(directory, "assets", "vocab.txt")
    return path if tf.io.gfile.exists(path) else None


def _recorded(directory: str, name: str):
    """The value of the root variable `name` (`_RECORDED`), or None."""
    prefix = variables_prefix(directory)
    reader = open_reader(prefix)
    graph = ObjectGraph(reader)
    node = graph.child(0, name)
    key = None if node is None else graph.variable_key(node)
    return None if key is None else read_tensor(reader, prefix, key)


def hub_do_lower_case(directory: str) -> bool | None:
    """The `do_lower_case` the export records (both writers do), or None."""
    value = _recorded(directory, "do_lower_case")
    return None if value is None else bool(value)


def _layout(graph: ObjectGraph, directory: str) -> str:
    """The layout, "model_garden" or "bert_tf", by the object graph; else `CheckpointError`."""
    encoder = graph.child(0, _MODEL_GARDEN_ENCODER)
    if encoder is not None and "_transformer_layers" in graph.children(encoder):
        return "model_garden"
    if encoder is None and all(
        graph.child(0, name) is not None for name in (_OURS_ENCODER, "__call__")
    ):
        return "bert_tf"
    raise CheckpointError(
        f"{directory}: a SavedModel but not a BERT encoder in the TF Hub layout "
        "(Model Garden's export_tfhub or bert_tf's hub export)"
    )


def _model_garden_encoder(graph: ObjectGraph) -> str:
    """The object path of a Model Garden export's encoder: its pretrainer's, which has the masked-LM
    head beside it, where the export has one."""
    with_mlm = graph.child(0, _MODEL_GARDEN_PRETRAINER_ENCODER) is not None
    return _MODEL_GARDEN_PRETRAINER_ENCODER if with_mlm else _MODEL_GARDEN_ENCODER


def _activation(directory: str) -> str:
    """The transformer's `hidden_act`, from the ops of the SavedModel's functions."""
    saved_model = saved_model_pb2.SavedModel()
    saved_model.ParseFromString(
        tf.io.gfile.GFile(os.path.join(directory, SAVED_MODEL_FILE), "rb").read()
    )
    ops = {
        node.op
        for graph in saved_model.meta_graphs
        for function in graph.graph_def.library.function
        for node in function.node_def
    }
    found = [name for op, name in _ACTIVATION_OPS if op in ops]
    if len(found) != 1:
        raise CheckpointError(
            f"{directory}: cannot tell the encoder's activation from its graph "
            f"({', '.join(found) or 'none known'}): pass `bert_config_file`"
        )
    return found[0]


def read_hub_config(directory: str) -> tuple[BertConfig | None, str]:
    """`(config, source)` of the encoder SavedModel at `directory`.

    bert_tf's export records its config. For Model Garden's, the sizes come from the variables'
    shapes (heads from the attention kernels' `[hidden, heads, head_size]`) and `hidden_act`
    from the graph's ops; dropout and initializer take BERT's defaults. None for a bert_tf
    export that records no config.
    """
    prefix = variables_prefix(directory)
    recorded = _recorded(directory, "bert_config")
    if recorded is not None:
        return BertConfig.from_dict(
            json.loads(recorded.decode("utf-8")), source=directory
        ), directory
    reader = open_reader(prefix)
    graph = ObjectGraph(reader)
    if _layout(graph, directory) != "model_garden":
        return None, directory
    query = graph.child(
        0, f"{_MODEL_GARDEN_ENCODER}/_transformer_layers/0/_attention_layer/_query_dense/kernel"
    )
    num_heads = reader.get_variable_to_shape_map()[graph.variable_key(query)][1]
    tensors, _ = model_garden_encoder_tensors(
        reader, graph, prefix, _model_garden_encoder(graph), num_heads
    )
    sizes = tf1_names.sizes({name: value.shape for name, value in tensors.items()})
    config = BertConfig(
        **sizes, num_attention_heads=num_heads, hidden_act=_activation(directory), source=directory
    )
    return config, directory


def read_hub_saved_model(directory: str, model) -> CheckpointWeights:
    """Reads the encoder SavedModel at `directory` into TF1 names and layouts, for `model`
    (whose head count a Model Garden export must have, and whose config orders a bert_tf one's
    variable list)."""
    prefix = variables_prefix(directory)
    reader = open_reader(prefix)
    graph = ObjectGraph(reader)
    weights = CheckpointWeights(directory, CheckpointFormat.TF_HUB.value, tensors={})
    if _layout(graph, directory) == "model_garden":
        num_heads = tf1_names.encoder_of(model).num_attention_heads
        weights.tensors, read = model_garden_encoder_tensors(
            reader, graph, prefix, _model_garden_encoder(graph), num_heads
        )
    else:
        weights.tensors, read = _bert_tf_tensors(
            reader, graph, directory, tf1_names.encoder_of(model).bert_config
        )
    skipped = {
        graph.variable_key(graph.child(0, name))
        for name in _NOT_WEIGHTS
        if graph.child(0, name) is not None
    }
    paths = graph.variable_paths()
    weights.unused = sorted(
        path for key, path in paths.items() if key not in read and key not in skipped
    )
    weights.skipped = sorted(paths[key] for key in skipped)
    return weights


def _bert_tf_tensors(reader, graph: ObjectGraph, directory: str, config: BertConfig):
    """`(TF1 name -> array, keys read)` of a bert_tf export: its variable list pairs, by position,
    with the variables of a pretrainer (or an encoder) built from `config`."""
    pretrainer = BertPretrainer(BertEncoder.from_bert_config(config))
    with_heads = graph.child(0, _OURS_PRETRAINER) is not None
    names = tf1_names.tf1_variables(pretrainer if with_heads else pretrainer.encoder)
    by_path = {entry.variable.path: (name, entry) for name, entry in names.items()}
    ours = (pretrainer if with_heads else pretrainer.encoder).variables
    listed = graph.children(graph.child(0, _OURS_PRETRAINER if with_heads else _OURS_ENCODER))
    if len(listed) != len(ours):
        raise CheckpointError(
            f"{directory}: {len(listed)} variables, a model of its config has {len(ours)}"
        )
    tensors, read = {}, set()
    for index, node in listed.items():
        key = graph.variable_key(node)
        name, entry = by_path[ours[int(index)].path]
        value = read_tensor(reader, variables_prefix(directory), key)
        if tuple(value.shape) != tuple(entry.variable.shape):
            raise CheckpointError(
                f"{directory}: variable {index} is {list(value.shape)}, {name} of its config "
                f"is {list(entry.variable.shape)}"
            )
        tensors[name] = entry.to_tf1(value)
        read.add(key)
    return tensors, read
