"""Checkpoints as other programs write them, for the checkpoint tests.

Google's TF1 names are spelled out here from google-research/bert's modeling.py and
run_pretraining.py, independently of `bert_tf.checkpoints.tf1_names`.
"""

from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf

from bert_test_utils import TINY

# A google-research/bert bert_config.json of the TINY sizes, with its dropout and initializer keys.
GOOGLE_CONFIG = {
    **TINY,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "initializer_range": 0.02,
}


def google_variable_shapes(config=None, num_labels=None) -> dict[str, tuple[int, ...]]:
    """Variable names and shapes of google-research/bert's BertModel and pretraining heads."""
    c = {**TINY, **(config or {})}
    hidden, inner, vocab = c["hidden_size"], c["intermediate_size"], c["vocab_size"]

    def dense(name, n_in, n_out):
        return {f"{name}/kernel": (n_in, n_out), f"{name}/bias": (n_out,)}

    def layer_norm(name):
        return {f"{name}/gamma": (hidden,), f"{name}/beta": (hidden,)}

    shapes = {
        "bert/embeddings/word_embeddings": (vocab, hidden),
        "bert/embeddings/token_type_embeddings": (c["type_vocab_size"], hidden),
        "bert/embeddings/position_embeddings": (c["max_position_embeddings"], hidden),
        **layer_norm("bert/embeddings/LayerNorm"),
    }
    for i in range(c["num_hidden_layers"]):
        layer = f"bert/encoder/layer_{i}"
        for projection in ("query", "key", "value"):
            shapes.update(dense(f"{layer}/attention/self/{projection}", hidden, hidden))
        shapes.update(dense(f"{layer}/attention/output/dense", hidden, hidden))
        shapes.update(layer_norm(f"{layer}/attention/output/LayerNorm"))
        shapes.update(dense(f"{layer}/intermediate/dense", hidden, inner))
        shapes.update(dense(f"{layer}/output/dense", inner, hidden))
        shapes.update(layer_norm(f"{layer}/output/LayerNorm"))
    shapes.update(dense("bert/pooler/dense", hidden, hidden))
    shapes.update(dense("cls/predictions/transform/dense", hidden, hidden))
    shapes.update(layer_norm("cls/predictions/transform/LayerNorm"))
    shapes["cls/predictions/output_bias"] = (vocab,)
    shapes["cls/seq_relationship/output_weights"] = (2, hidden)  # [2, hidden], transposed
    shapes["cls/seq_relationship/output_bias"] = (2,)
    if num_labels:  # run_classifier.py's head
        shapes["output_weights"] = (num_labels, hidden)
        shapes["output_bias"] = (num_labels,)
    return shapes


def random_tensors(shapes: dict[str, tuple[int, ...]], seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 values; LayerNorm gammas near 1 so that the outputs carry signal."""
    rng = np.random.default_rng(seed)
    return {
        name: ((1.0 if name.endswith("gamma") else 0.0) + rng.normal(0.0, 0.2, shape)).astype(
            "float32"
        )
        for name, shape in shapes.items()
    }


def randomize_weights(model, seed: int = 0) -> None:
    """Random values in every weight of a Keras model, so that no bias or LayerNorm is trivial."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        gamma = weight.name.split(":")[0].endswith("gamma")
        weight.assign(
            ((1.0 if gamma else 0.0) + rng.normal(0.0, 0.2, weight.shape)).astype("float32")
        )


def write_google_tf1_checkpoint(directory, tensors, config=None, vocab=True) -> str:
    """Saves `tensors` as google-research/bert does: TF1 graph mode, named variables,
    AdamWeightDecay slots (`adam_m`, `adam_v`), `global_step`, a `tf.compat.v1.train.Saver`. Writes
    `bert_config.json` and `vocab.txt` beside it unless told not to. Returns the prefix."""
    v1 = tf.compat.v1
    os.makedirs(directory, exist_ok=True)
    prefix = os.path.join(directory, "bert_model.ckpt")
    with tf.Graph().as_default():
        for name, value in tensors.items():
            scope, _, leaf = name.rpartition("/")
            with v1.variable_scope(scope or v1.get_variable_scope()):
                v1.get_variable(leaf, initializer=value)
                v1.get_variable(f"{leaf}/adam_m", initializer=np.zeros_like(value), trainable=False)
                v1.get_variable(f"{leaf}/adam_v", initializer=np.zeros_like(value), trainable=False)
        v1.train.get_or_create_global_step()
        saver = v1.train.Saver()
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            saver.save(session, prefix)
    if config is not None:
        with open(os.path.join(directory, "bert_config.json"), "w") as f:
            json.dump(config, f)
    if vocab:
        with open(os.path.join(directory, "vocab.txt"), "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) + "\n")
    return prefix


def hugging_face_config(hidden_act="gelu"):
    return {
        "architectures": ["BertForPreTraining"],
        "model_type": "bert",
        "hidden_act": hidden_act,
        "layer_norm_eps": 1e-12,
        "position_embedding_type": "absolute",
        "pad_token_id": 0,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "num_hidden_layers": TINY["num_hidden_layers"],
        "hidden_size": TINY["hidden_size"],
        "num_attention_heads": TINY["num_attention_heads"],
        "vocab_size": TINY["vocab_size"],
        "intermediate_size": TINY["intermediate_size"],
        "type_vocab_size": TINY["type_vocab_size"],
        "max_position_embeddings": TINY["max_position_embeddings"],
        "transformers_version": "4.57.0",
    }


def hugging_face_state(prefix="bert.", heads=(), seed=0):
    """Random weights in transformers' BERT names; nn.Linear weights are [out, in]."""
    hidden, inner, vocab = TINY["hidden_size"], TINY["intermediate_size"], TINY["vocab_size"]
    shapes = {
        "embeddings.word_embeddings.weight": (vocab, hidden),
        "embeddings.position_embeddings.weight": (TINY["max_position_embeddings"], hidden),
        "embeddings.token_type_embeddings.weight": (TINY["type_vocab_size"], hidden),
    }

    def linear(name, n_in, n_out):
        shapes.update({f"{name}.weight": (n_out, n_in), f"{name}.bias": (n_out,)})

    def layer_norm(name):
        shapes.update({f"{name}.weight": (hidden,), f"{name}.bias": (hidden,)})

    layer_norm("embeddings.LayerNorm")
    for i in range(TINY["num_hidden_layers"]):
        for projection in ("query", "key", "value"):
            linear(f"encoder.layer.{i}.attention.self.{projection}", hidden, hidden)
        linear(f"encoder.layer.{i}.attention.output.dense", hidden, hidden)
        layer_norm(f"encoder.layer.{i}.attention.output.LayerNorm")
        linear(f"encoder.layer.{i}.intermediate.dense", hidden, inner)
        linear(f"encoder.layer.{i}.output.dense", inner, hidden)
        layer_norm(f"encoder.layer.{i}.output.LayerNorm")
    linear("pooler.dense", hidden, hidden)
    rng = np.random.default_rng(seed)
    state = {
        prefix + name: (
            (1.0 if "LayerNorm.weight" in name else 0.0) + rng.normal(0.0, 0.2, shape)
        ).astype("float32")
        for name, shape in shapes.items()
    }
    state[prefix + "embeddings.position_ids"] = np.arange(TINY["max_position_embeddings"])[None]
    if "pretraining" in heads:
        state.update(
            {
                "cls.predictions.transform.dense.weight": rng.normal(
                    0, 0.2, (hidden, hidden)
                ).astype("float32"),
                "cls.predictions.transform.dense.bias": rng.normal(0, 0.2, hidden).astype(
                    "float32"
                ),
                "cls.predictions.transform.LayerNorm.weight": np.ones(hidden, "float32"),
                "cls.predictions.transform.LayerNorm.bias": np.zeros(hidden, "float32"),
                "cls.predictions.bias": rng.normal(0, 0.2, vocab).astype("float32"),
                "cls.seq_relationship.weight": rng.normal(0, 0.2, (2, hidden)).astype("float32"),
                "cls.seq_relationship.bias": rng.normal(0, 0.2, 2).astype("float32"),
            }
        )
        # Tied to the word embeddings and to cls.predictions.bias, as transformers saves them.
        state["cls.predictions.decoder.weight"] = state["bert.embeddings.word_embeddings.weight"]
        state["cls.predictions.decoder.bias"] = state["cls.predictions.bias"]
    if "classifier" in heads:
        state["classifier.weight"] = rng.normal(0, 0.2, (3, hidden)).astype("float32")
        state["classifier.bias"] = rng.normal(0, 0.2, 3).astype("float32")
    return state
