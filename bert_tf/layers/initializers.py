"""The weight initializers (google-research/bert's, and the task heads') and BERT's LayerNorm."""

import keras

from bert_tf.errors import UserInputError
from bert_tf.head_initializers import HEAD_INITIALIZERS

LAYER_NORM_EPSILON = 1e-12


def bert_initializer(initializer_range: float) -> keras.initializers.Initializer:
    """Truncated normal with stddev `initializer_range`, as `create_initializer` in modeling.py."""
    return keras.initializers.TruncatedNormal(stddev=initializer_range)


def task_head_initializer(name: str, initializer_range: float) -> keras.initializers.Initializer:
    """The initializer of a task head's kernel.

    Args:
        name: one of `HEAD_INITIALIZERS`: "normal" (Hugging Face's, the default of the task
            models) or "truncated_normal" (google-research/bert's `create_initializer`).
        initializer_range: the standard deviation, before any truncation.

    Returns:
        The Keras initializer.

    Raises:
        UserInputError: `name` is not one of `HEAD_INITIALIZERS`.
    """
    if name == "normal":
        return keras.initializers.RandomNormal(stddev=initializer_range)
    if name == "truncated_normal":
        return bert_initializer(initializer_range)
    raise UserInputError(
        f"`head_initializer`={name!r}: must be one of {', '.join(HEAD_INITIALIZERS)}"
    )


def bert_layer_norm(name: str) -> keras.layers.LayerNormalization:
    """LayerNorm over the last axis with BERT's epsilon, run in float32 under mixed precision."""
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)
