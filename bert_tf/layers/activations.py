"""`hidden_act` names (bert_config.json) to activation functions."""

from __future__ import annotations

import functools

import keras

from bert_tf.bert_config import HIDDEN_ACTIVATIONS

_ACTIVATIONS = {
    # google-research/bert's "gelu" is the exact form, x * Phi(x), with erf.
    "gelu": functools.partial(keras.activations.gelu, approximate=False),
    "gelu_approximate": functools.partial(keras.activations.gelu, approximate=True),
    "gelu_new": functools.partial(keras.activations.gelu, approximate=True),
    "gelu_pytorch_tanh": functools.partial(keras.activations.gelu, approximate=True),
    "relu": keras.activations.relu,
    "silu": keras.activations.silu,
    "swish": keras.activations.silu,
    "tanh": keras.activations.tanh,
    "linear": keras.activations.linear,
}
assert set(_ACTIVATIONS) == set(HIDDEN_ACTIVATIONS)


def get_activation(name: str):
    """Returns the activation for a `hidden_act` name, e.g. `get_activation("gelu")`."""
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown hidden_act {name!r}; expected one of {', '.join(_ACTIVATIONS)}") from None
