"""Parity with Model Garden's BertEncoder (tf_keras): same random weights, same outputs to 1e-5."""

import tensorflow as tf

from bert_test_utils import (
    TINY,
    assert_encoder_outputs_close,
    model_garden_encoder,
    random_encoder_inputs,
    tiny_encoder,
)
from checkpoint_test_utils import randomize_weights


def model_garden_weight_name(our_path: str) -> str:
    """Our variable path -> Model Garden's variable name (explicit, one rule per part)."""
    fixed = {
        "embeddings/word_embeddings/embeddings": "word_embeddings/embeddings",
        "embeddings/position_embeddings": "position_embedding/embeddings",
        "embeddings/token_type_embeddings/embeddings": "type_embeddings/embeddings",
        "embeddings/layer_norm/gamma": "embeddings/layer_norm/gamma",
        "embeddings/layer_norm/beta": "embeddings/layer_norm/beta",
        "pooler/kernel": "pooler_transform/kernel",
        "pooler/bias": "pooler_transform/bias",
    }
    if our_path in fixed:
        return fixed[our_path]
    layer, rest = our_path.split("/", 1)
    index = int(layer.removeprefix("transformer_layer_"))
    block = {
        "self_attention/query": "self_attention/query",
        "self_attention/key": "self_attention/key",
        "self_attention/value": "self_attention/value",
        "attention_output": "self_attention/attention_output",
        "attention_layer_norm": "self_attention_layer_norm",
        "intermediate": "intermediate",
        "output_dense": "output",
        "output_layer_norm": "output_layer_norm",
    }
    sublayer, variable = rest.rsplit("/", 1)
    return f"transformer/layer_{index}/{block[sublayer]}/{variable}"


def copy_model_garden_weights(ours, theirs):
    by_name = {w.name.removesuffix(":0"): w.numpy() for w in theirs.weights}
    assert len(by_name) == len(ours.weights)
    for variable in ours.weights:
        value = by_name.pop(model_garden_weight_name(variable.path))
        variable.assign(value.reshape(variable.shape))  # MG's [H, heads, head] -> our [H, H]
    assert not by_name, f"Model Garden weights left unmapped: {sorted(by_name)}"


def check_parity(hidden_act):
    theirs = model_garden_encoder(hidden_act)
    inputs = random_encoder_inputs(3, 24, TINY["vocab_size"], lengths=[24, 13, 5], seed=1)
    theirs(inputs)  # builds the weights
    # Random biases and LayerNorms (not MG's zeros/ones) expose a swapped mapping, and large
    # enough values separate exact from tanh GELU well beyond the tolerance.
    randomize_weights(theirs, seed=2)
    expected = theirs(inputs)
    ours = tiny_encoder(hidden_act=hidden_act)
    copy_model_garden_weights(ours, theirs)
    got = ours(inputs)
    assert_encoder_outputs_close(got, expected)
    assert len(got["encoder_outputs"]) == TINY["num_hidden_layers"]
    # Not trivially equal: the outputs carry signal.
    assert float(tf.math.reduce_std(got["sequence_output"])) > 0.1


def test_parity_exact_gelu():
    check_parity("gelu")


def test_parity_approximate_gelu():
    check_parity("gelu_approximate")
