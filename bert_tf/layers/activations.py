"""`hidden_act` names (bert_config.json) to activation functions."""

from __future__ import annotations

import functools
import math

import keras
from keras import ops

from bert_tf.bert_config import HIDDEN_ACTS
from bert_tf.errors import UserInputError


def gelu(x):
    """The exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), as Hugging Face's "gelu".

    google-research/bert's modeling.py and Model Garden compute the tanh approximation
    (`gelu_approximate` here) for the same name; the two differ by less than 1e-3 and the
    released checkpoints work with either. Written with erf rather than Keras's
    (TensorFlow's erfc form): ONNX has an Erf op but no Erfc, so tf2onnx converts the
    exported SavedModels.
    """
    return 0.5 * x * (1.0 + ops.erf(x * (1.0 / math.sqrt(2.0))))


# The activation each `hidden_act` name stands for (`bert_config.HIDDEN_ACTS`).
_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_approximate": functools.partial(keras.activations.gelu, approximate=True),
    "relu": keras.activations.relu,
    "silu": keras.activations.silu,
    "tanh": keras.activations.tanh,
    "linear": keras.activations.linear,
}
HIDDEN_ACTIVATIONS = {name: _ACTIVATIONS[activation] for name, activation in HIDDEN_ACTS.items()}


def get_activation(name: str):
    """The activation function for a `hidden_act` name, e.g. `get_activation("gelu")`.

    Args:
        name: a `hidden_act` of bert_config.json (`bert_config.HIDDEN_ACTS`).

    Returns:
        The function, tensor to tensor.

    Raises:
        UserInputError: an unknown `name`.
    """
    try:
        return HIDDEN_ACTIVATIONS[name]
    except KeyError:
        raise UserInputError(
            f"unknown hidden_act {name!r}; expected one of {', '.join(HIDDEN_ACTIVATIONS)}"
        ) from None
