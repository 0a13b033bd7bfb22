"""Serialized `tf.Example`s as a signature's input, as TF Serving's Classify and Regress APIs send.

Two feature sets, each the input of its own signature:
    ids: int64 `input_word_ids`, `input_mask`, `input_type_ids`, one value per token (the
        encoder's input names, and Model Garden's `serve_examples` features), the three of
        one length in each example, padded or not, up to `max_position_embeddings`.
    text: bytes `text_a`, and `text_b` for the second text of a pair, one value each.
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.models.bert_encoder import ENCODER_INPUTS

# TF Serving's Classify and Regress APIs feed the signature input named "inputs"
# (`tf.saved_model.CLASSIFY_INPUTS`, `REGRESS_INPUTS`).
EXAMPLES_SPEC = tf.TensorSpec([None], tf.string, name=tf.saved_model.CLASSIFY_INPUTS)
TEXT_FEATURES = ("text_a", "text_b")


def parse_id_examples(serialized: tf.Tensor) -> dict[str, tf.Tensor]:
    """Serialized examples `[batch]` -> the three int32
    ids `[batch, seq]`, padded with 0 to the longest.

    An example without `input_word_ids` (say, one with google-research/bert's `input_ids`),
    whose three features differ in length, or whose values do not fit in int32, is refused
    by name.
    """
    features = tf.io.parse_example(
        serialized,
        {name: tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int32) for name in ENCODER_INPUTS},
    )
    lengths = features["input_word_ids"].row_lengths()
    checks = [
        tf.debugging.assert_positive(
            lengths, message="each tf.Example needs input_word_ids, int64, one value per token"
        )
    ]
    checks += [
        tf.debugging.assert_equal(
            features[name].row_lengths(),
            lengths,
            message=f"each tf.Example needs as many {name} as input_word_ids values",
        )
        for name in ENCODER_INPUTS[1:]
    ]
    checks += [
        tf.debugging.assert_equal(
            tf.cast(tf.cast(features[name].flat_values, tf.int32), tf.int64),
            features[name].flat_values,
            message=f"{name} must fit in int32",
        )
        for name in ENCODER_INPUTS
    ]
    with tf.control_dependencies(checks):
        return {
            name: tf.identity(tf.cast(features[name].to_tensor(), tf.int32))
            for name in ENCODER_INPUTS
        }


def parse_text_examples(serialized: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Serialized examples `[batch]` -> `text_a`, `text_b`
    (`""` where absent) and `has_text_b`, each `[batch]`.

    `text_a` is required; an example with more than one value of either is refused.
    """
    features = tf.io.parse_example(
        serialized,
        {name: tf.io.RaggedFeature(tf.string, row_splits_dtype=tf.int32) for name in TEXT_FEATURES},
    )
    text_a, text_b = features["text_a"], features["text_b"]
    checks = [
        tf.debugging.assert_equal(
            text_a.row_lengths(), 1, message="each tf.Example needs one text_a value"
        ),
        tf.debugging.assert_less_equal(
            text_b.row_lengths(), 1, message="each tf.Example has at most one text_b value"
        ),
    ]
    with tf.control_dependencies(checks):
        return (
            tf.identity(text_a.flat_values),
            tf.squeeze(text_b.to_tensor("", shape=[None, 1]), 1),
            tf.identity(text_b.row_lengths() > 0),
        )
