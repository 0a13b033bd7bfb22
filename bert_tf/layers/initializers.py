"""The weight initializer of google-research/bert."""

import keras


def bert_initializer(initializer_range: float) -> keras.initializers.Initializer:
    """Truncated normal with stddev `initializer_range`, as `create_initializer` in modeling.py."""
    return keras.initializers.TruncatedNormal(stddev=initializer_range)
