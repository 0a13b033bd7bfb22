"""Keeping a Keras model's variables, and nothing else of it, in a SavedModel `tf.Module`."""

from __future__ import annotations

import keras


class KerasModelRef:
    """Holds a Keras model out of sight of SavedModel tracking.

    `tf.saved_model.save` would otherwise walk the model's own Keras state (and
    retrace it); a module instead tracks the model's variables, which is all that
    its `tf.function`s capture (the underlying `tf.Variable`s: TF1-style loaders such as
    saved_model_cli and TF Serving need those), as `keras.export.ExportArchive` does.

    Example:
    >>> import tensorflow as tf
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> module = tf.Module()
    >>> module.model = KerasModelRef(model)
    >>> len(module.variables)  # the model is out of sight
    0
    >>> module.model_variables = [v.value for v in model.variables]
    >>> len(module.variables)
    2
    """

    def __init__(self, model: keras.Model):
        self.model = model
