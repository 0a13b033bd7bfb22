"""Model Garden TF2 checkpoints: `tf.train.Checkpoint(encoder=tfm.nlp.networks.BertEncoder)`.

These are what `official/nlp/tools/tf2_bert_encoder_checkpoint_converter.py` writes. The
reader walks the checkpoint's object graph by the encoder's attribute names
(`_embedding_layer`, `_transformer_layers/N/_attention_layer/_query_dense`, ...), which
Model Garden's `BertEncoder` and `BertEncoderV2` share, never by `layer_with_weights-N`
positions. A pretrainer's checkpoint (`BertPretrainerV2`, saved whole as `model` or as its
`checkpoint_items`) also gives its masked-LM head, the encoder's sibling `masked_lm`.
"""

from __future__ import annotations

import numpy as np

from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.tf_checkpoint_reader import (
    ObjectGraph,
    encoder_paths,
    open_reader,
    read_tensor,
    unread_variables,
)

# TF1 name -> path below the encoder node.
_ENCODER = {
    "bert/embeddings/word_embeddings": "_embedding_layer/embeddings",
    "bert/embeddings/position_embeddings": "_position_embedding_layer/embeddings",
    "bert/embeddings/token_type_embeddings": "_type_embedding_layer/embeddings",
    "bert/embeddings/LayerNorm/gamma": "_embedding_norm_layer/gamma",
    "bert/embeddings/LayerNorm/beta": "_embedding_norm_layer/beta",
    "bert/pooler/dense/kernel": "_pooler_layer/kernel",
    "bert/pooler/dense/bias": "_pooler_layer/bias",
}
# TF1 name below `bert/encoder/layer_N/` -> path below `_transformer_layers/N`.
_BLOCK = {
    **{
        f"attention/self/{p}/{v}": f"_attention_layer/_{p}_dense/{v}"
        for p in ("query", "key", "value")
        for v in ("kernel", "bias")
    },
    "attention/output/dense/kernel": "_attention_layer/_output_dense/kernel",
    "attention/output/dense/bias": "_attention_layer/_output_dense/bias",
    "attention/output/LayerNorm/gamma": "_attention_layer_norm/gamma",
    "attention/output/LayerNorm/beta": "_attention_layer_norm/beta",
    "intermediate/dense/kernel": "_intermediate_dense/kernel",
    "intermediate/dense/bias": "_intermediate_dense/bias",
    "output/dense/kernel": "_output_dense/kernel",
    "output/dense/bias": "_output_dense/bias",
    "output/LayerNorm/gamma": "_output_layer_norm/gamma",
    "output/LayerNorm/beta": "_output_layer_norm/beta",
}


# TF1 name -> path below the masked-LM head
# (`layers.MaskedLM`; its `embedding_table` is the encoder's).
_MASKED_LM = {
    "cls/predictions/transform/dense/kernel": "dense/kernel",
    "cls/predictions/transform/dense/bias": "dense/bias",
    "cls/predictions/transform/LayerNorm/gamma": "layer_norm/gamma",
    "cls/predictions/transform/LayerNorm/beta": "layer_norm/beta",
    "cls/predictions/output_bias": "bias",
}


# The axis of Model Garden's attention variables that holds the heads, by TF1 name below
# `bert/encoder/layer_N/`; TF1 merges it with the next one (head_size) into `[hidden, hidden]`.
_HEAD_AXIS = {
    # [hidden, heads, head_size]
    **{f"attention/self/{p}/kernel": 1 for p in ("query", "key", "value")},
    **{f"attention/self/{p}/bias": 0 for p in ("query", "key", "value")},  # [heads, head_size]
    "attention/output/dense/kernel": 0,  # [heads, head_size, hidden]
}


def _merge_heads(prefix: str, tf1_name: str, value: np.ndarray, num_heads: int) -> np.ndarray:
    """Model Garden keeps attention heads apart; TF1 merges them. Raises `CheckpointError`
    unless the checkpoint has `num_heads` heads: merged, another count would load silently
    and compute something else."""
    axis = _HEAD_AXIS.get(tf1_name.split("/", 3)[-1])
    if axis is None:
        return value
    if value.shape[axis] != num_heads:
        raise CheckpointError(
            f"{prefix}: checkpoint does not fit the model: num_attention_heads is "
            f"{value.shape[axis]} in the checkpoint and {num_heads} in the model"
        )
    return value.reshape(*value.shape[:axis], -1, *value.shape[axis + 2 :])


def read_model_garden_checkpoint(prefix: str, num_heads: int) -> CheckpointWeights:
    """Reads a Model Garden encoder checkpoint into TF1 names and layouts, for a model with
    `num_heads` attention heads (`CheckpointError` if the checkpoint has another count)."""
    reader = open_reader(prefix)
    graph = ObjectGraph(reader)
    part, encoder = encoder_paths(graph)
    tensors, read = model_garden_encoder_tensors(reader, graph, prefix, encoder, num_heads)
    weights = CheckpointWeights(prefix, CheckpointFormat.MODEL_GARDEN.value, tensors=tensors)
    weights.unexpected, weights.unused, weights.skipped = unread_variables(
        graph, read, part, encoder
    )
    return weights


def model_garden_encoder_tensors(
    reader, graph: ObjectGraph, prefix: str, encoder: str, num_heads: int
) -> tuple[dict[str, np.ndarray], set[str]]:
    """`(TF1 name -> array, checkpoint keys read)` of the Model Garden encoder at object path
    `encoder`, with its sibling `masked_lm` head where there is one."""
    layers = graph.children(graph.child(0, f"{encoder}/_transformer_layers"))
    paths = {name: f"{encoder}/{path}" for name, path in _ENCODER.items()}
    for index in sorted(layers, key=int):
        block = f"{encoder}/_transformer_layers/{index}"
        paths.update(
            {
                f"bert/encoder/layer_{index}/{name}": f"{block}/{path}"
                for name, path in _BLOCK.items()
            }
        )
    masked_lm = "/".join([*encoder.split("/")[:-1], "masked_lm"])
    if graph.child(0, masked_lm) is not None:
        paths.update({name: f"{masked_lm}/{path}" for name, path in _MASKED_LM.items()})

    tensors, read = {}, set()
    for tf1_name, path in paths.items():
        node = graph.child(0, path)
        key = None if node is None else graph.variable_key(node)
        if key is None:
            raise CheckpointError(f"{prefix}: Model Garden checkpoint has no variable {path}")
        tensors[tf1_name] = _merge_heads(
            prefix, tf1_name, read_tensor(reader, prefix, key), num_heads
        )
        read.add(key)
    return tensors, read
