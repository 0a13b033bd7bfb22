"""The weight initializer and the LayerNorm of google-research/bert."""

import keras

LAYER_NORM_EPSILON = 1e-12


def bert_initializer(initializer_range: float) -> keras.initializers.Initializer:
    """Truncated normal with stddev `initializer_range`, as `create_initializer` in modeling.py."""
    return keras.initializers.TruncatedNormal(stddev=initializer_range)


def bert_layer_norm(name: str) -> keras.layers.LayerNormalization:
    """LayerNorm over the last axis with BERT's epsilon, run in float32 under mixed precision."""
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)
