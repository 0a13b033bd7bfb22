"""The one table between bert_tf's variables and google-research/bert's TF1 names.

Reading and writing TF1 checkpoints both go through `tf1_variables`, and every other
format is translated into these names first, so the mapping is written once.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Mapping, Sequence

import keras
import numpy as np

from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer

# Encoder variables live under "bert/"; a released BertModel may lack the pooler.
ENCODER_PREFIX = "bert/"
OPTIONAL = ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")

# Fine-tuning heads of google-research/bert: run_classifier.py's `output_weights`
# `[num_labels, hidden]` and `output_bias`, run_squad.py's `cls/squad/...` (`[2, hidden]`).
TASK_HEADS = {"classifier": "", "squad": "cls/squad/"}

# Optimizer slots and step counters of a TF1 training checkpoint.
_SKIPPED = re.compile(r"(^|/)(adam_[mv]|Adam(_\d+)?|global_step|beta[12]_power)$")
_LAYER = re.compile(r"^bert/encoder/layer_(\d+)/")


@dataclasses.dataclass(frozen=True)
class TF1Variable:
    """One of our variables under its TF1 name; `transposed` when TF1 stores the transpose."""

    variable: keras.Variable
    transposed: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape in the TF1 layout."""
        shape = tuple(self.variable.shape)
        return shape[::-1] if self.transposed else shape

    def to_tf1(self, value) -> np.ndarray:
        """Our layout to TF1's, and back: a transpose is its own inverse."""
        return np.asarray(value).T if self.transposed else np.asarray(value)

    def numpy(self) -> np.ndarray:
        """The value in the TF1 layout."""
        return self.to_tf1(self.variable.numpy())

    def assign(self, value: np.ndarray) -> None:
        """Assigns a value given in the TF1 layout."""
        self.variable.assign(self.to_tf1(value).astype(self.variable.dtype))


def _dense(prefix: str, layer) -> dict[str, TF1Variable]:
    return {
        f"{prefix}/kernel": TF1Variable(layer.kernel),
        f"{prefix}/bias": TF1Variable(layer.bias),
    }


def _layer_norm(prefix: str, layer) -> dict[str, TF1Variable]:
    return {f"{prefix}/gamma": TF1Variable(layer.gamma), f"{prefix}/beta": TF1Variable(layer.beta)}


def encoder_of(model) -> BertEncoder:
    """The `BertEncoder` of a model: the model itself, or its `encoder` attribute."""
    encoder = model if isinstance(model, BertEncoder) else getattr(model, "encoder", None)
    if not isinstance(encoder, BertEncoder):
        raise CheckpointError(
            f"{type(model).__name__} is neither a BertEncoder nor a model with one "
            "as its `encoder` attribute"
        )
    return encoder


def tf1_variables(model) -> dict[str, TF1Variable]:
    """TF1 name -> variable, for a `BertEncoder`, a `BertPretrainer` or any model with `.encoder`.

    A `BertPretrainer` adds `cls/predictions/...` and, with its next-sentence head,
    `cls/seq_relationship/...`; it is
    built first if it has not been called yet, so that its heads have variables.
    """
    encoder = encoder_of(model)
    embeddings = encoder.embeddings
    names = {
        "bert/embeddings/word_embeddings": TF1Variable(embeddings.word_embeddings.embeddings),
        "bert/embeddings/position_embeddings": TF1Variable(embeddings.position_embeddings),
        "bert/embeddings/token_type_embeddings": TF1Variable(
            embeddings.token_type_embeddings.embeddings
        ),
        **_layer_norm("bert/embeddings/LayerNorm", embeddings.layer_norm),
    }
    for i, block in enumerate(encoder.transformer_layers):
        prefix = f"bert/encoder/layer_{i}"
        for projection in ("query", "key", "value"):
            names.update(
                _dense(
                    f"{prefix}/attention/self/{projection}",
                    getattr(block.self_attention, projection),
                )
            )
        names.update(_dense(f"{prefix}/attention/output/dense", block.attention_output))
        names.update(
            _layer_norm(f"{prefix}/attention/output/LayerNorm", block.attention_layer_norm)
        )
        names.update(_dense(f"{prefix}/intermediate/dense", block.intermediate))
        names.update(_dense(f"{prefix}/output/dense", block.output_dense))
        names.update(_layer_norm(f"{prefix}/output/LayerNorm", block.output_layer_norm))
    names.update(_dense("bert/pooler/dense", encoder.pooler))

    if isinstance(model, BertPretrainer) and not model.built:
        model.build_with_dummy_inputs()
    head = getattr(model, "masked_lm_head", None)  # a pretrainer's, or a fine-tuning auxiliary's
    if head is not None:
        names.update(_dense("cls/predictions/transform/dense", head.transform))
        names.update(_layer_norm("cls/predictions/transform/LayerNorm", head.layer_norm))
        names["cls/predictions/output_bias"] = TF1Variable(head.output_bias)
    if isinstance(model, BertPretrainer) and model.next_sentence_head is not None:
        # TF1 stores the next-sentence kernel as [2, hidden]; ours is [hidden, 2].
        names["cls/seq_relationship/output_weights"] = TF1Variable(
            model.next_sentence_head.kernel, transposed=True
        )
        names["cls/seq_relationship/output_bias"] = TF1Variable(model.next_sentence_head.bias)
    return names


def is_skipped(name: str) -> bool:
    """True for TF1 optimizer slots (`adam_m`, `adam_v`) and `global_step`."""
    return bool(_SKIPPED.search(name))


def is_encoder_name(name: str) -> bool:
    return name.startswith(ENCODER_PREFIX)


def task_head_part(name: str) -> tuple[str, str] | None:
    """`(role, "kernel" | "bias")` for a fine-tuning head's TF1 name, else None."""
    for role, prefix in TASK_HEADS.items():
        if name == f"{prefix}output_weights":
            return role, "kernel"
        if name == f"{prefix}output_bias":
            return role, "bias"
    return None


def task_head_tensors(role: str, head: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A head `{"kernel": [hidden, labels], "bias": [labels]}` in its TF1 names and layout."""
    prefix = TASK_HEADS[role]
    return {
        f"{prefix}output_weights": np.asarray(head["kernel"]).T,
        f"{prefix}output_bias": np.asarray(head["bias"]),
    }


def sizes(shapes: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """The `bert_config.json` sizes that TF1-named shapes reveal (those present)."""
    found = {}
    names = {
        "bert/embeddings/word_embeddings": ("vocab_size", "hidden_size"),
        "bert/embeddings/position_embeddings": ("max_position_embeddings", None),
        "bert/embeddings/token_type_embeddings": ("type_vocab_size", None),
        "bert/encoder/layer_0/intermediate/dense/kernel": (None, "intermediate_size"),
    }
    for name, fields in names.items():
        if name in shapes and len(shapes[name]) == 2:
            found.update({field: size for field, size in zip(fields, shapes[name]) if field})
    layers = {int(m.group(1)) for m in map(_LAYER.match, shapes) if m}
    if layers:
        found["num_hidden_layers"] = max(layers) + 1
    return found
