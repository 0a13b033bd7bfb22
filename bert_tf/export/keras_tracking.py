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
    >>> self._ref = KerasModelRef(model)  # doctest: +SKIP
    >>> self.model_variables = [v.value for v in model.variables]  # doctest: +SKIP
    """

    def __init__(self, model: keras.Model):
        self.model = model
