"""The pretraining TFRecord schema: the one place that names the features, their types and lengths.

It is google-research/bert's schema, so its readers, Model Garden's
`BertPretrainDataLoader` and ours read the same files. Every feature is int64
except `masked_lm_weights` (float32). `next_sentence_labels` is 0 when segment
B really follows A and 1 when B is random. Records written without next-sentence
prediction (packed text, segment ids all 0) have no `next_sentence_labels`: their
absence records that mode, which the reader checks against its own.
"""

from __future__ import annotations

import tensorflow as tf

SEQUENCE_FEATURES = ("input_ids", "input_mask", "segment_ids")
PREDICTION_FEATURES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
LABEL_FEATURES = ("next_sentence_labels",)
FEATURE_NAMES = SEQUENCE_FEATURES + PREDICTION_FEATURES + LABEL_FEATURES
FLOAT_FEATURES = frozenset({"masked_lm_weights"})


def feature_lengths(
    max_seq_length: int, max_predictions_per_seq: int, next_sentence_prediction: bool = True
) -> dict[str, int]:
    """The fixed length of each feature, in schema order (without the label when not
    `next_sentence_prediction`)."""
    lengths = {name: max_seq_length for name in SEQUENCE_FEATURES}
    lengths.update({name: max_predictions_per_seq for name in PREDICTION_FEATURES})
    if next_sentence_prediction:
        lengths["next_sentence_labels"] = 1
    return lengths


def feature_spec(
    max_seq_length: int, max_predictions_per_seq: int, next_sentence_prediction: bool = True
) -> dict[str, tf.io.FixedLenFeature]:
    """The `tf.io.parse_example` spec of one record."""
    lengths = feature_lengths(max_seq_length, max_predictions_per_seq, next_sentence_prediction)
    return {
        name: tf.io.FixedLenFeature([length], tf.float32 if name in FLOAT_FEATURES else tf.int64)
        for name, length in lengths.items()
    }


def parse_examples(
    serialized: tf.Tensor,
    max_seq_length: int,
    max_predictions_per_seq: int,
    next_sentence_prediction: bool = True,
) -> dict[str, tf.Tensor]:
    """Parses a batch of serialized records into the model's feature dict.

    int64 features become int32 (what TPUs and the encoder take); the label, if
    any, is squeezed to `[batch]`.
    """
    parsed = tf.io.parse_example(
        serialized, feature_spec(max_seq_length, max_predictions_per_seq, next_sentence_prediction)
    )
    features = to_model_dtypes(parsed)
    if next_sentence_prediction:
        features["next_sentence_labels"] = tf.squeeze(features["next_sentence_labels"], axis=-1)
    return features


def to_model_dtypes(features: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """Each feature in the model's dtype: float32 for `FLOAT_FEATURES`, else int32 (TPUs)."""
    return {
        name: tf.cast(value, tf.float32 if name in FLOAT_FEATURES else tf.int32)
        for name, value in features.items()
    }


def names_of(values) -> list[str]:
    """The schema's feature names that `values` holds, in schema order: all of them, or all
    but `next_sentence_labels`; any other set raises ValueError."""
    names = [name for name in FEATURE_NAMES if name in values]
    if set(values) != set(names) or not set(FEATURE_NAMES) - set(LABEL_FEATURES) <= set(names):
        raise ValueError(
            f"pretraining features {sorted(values)}: expected {list(FEATURE_NAMES)}, "
            "with or without next_sentence_labels"
        )
    return names


def to_example(values: dict[str, list]) -> tf.train.Example:
    """Builds one `tf.train.Example` from per-feature lists (already padded)."""
    feature = {}
    for name in names_of(values):
        if name in FLOAT_FEATURES:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values[name]))
        else:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values[name]))
    return tf.train.Example(features=tf.train.Features(feature=feature))
