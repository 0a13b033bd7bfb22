"""`SparseCrossEntropy`: the classification loss of every fine-tuning task, with label smoothing."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_tf")
class SparseCrossEntropy(keras.losses.Loss):
    """Cross-entropy of integer labels against logits over the last axis, optionally smoothed.

    Keras's `SparseCategoricalCrossentropy` has no label smoothing, so the labels
    become one-hot targets for `categorical_crossentropy`. The mean is over the
    sample weights (`mean_with_sample_weight`): with per-token weights (tagging),
    the loss averages over the weighted tokens only. `scale` multiplies the loss
    (SQuAD's start and end losses are each half of the total).

    Example:
    >>> loss = SparseCrossEntropy(label_smoothing=0.1)
    >>> round(float(loss(keras.ops.array([0]), keras.ops.array([[0.0, 0.0]]))), 4)
    0.6931
    """

    def __init__(
        self,
        label_smoothing: float = 0.0,
        scale: float = 1.0,
        name: str = "sparse_cross_entropy",
        reduction: str = "mean_with_sample_weight",
        dtype=None,
    ):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.label_smoothing = label_smoothing
        self.scale = scale

    def call(self, label_ids, logits):  # [...], [..., num_classes] -> [...]
        targets = ops.one_hot(ops.cast(label_ids, "int32"), ops.shape(logits)[-1])
        return self.scale * keras.losses.categorical_crossentropy(
            targets, logits, from_logits=True, label_smoothing=self.label_smoothing
        )

    def get_config(self):
        return {
            **super().get_config(),
            "label_smoothing": self.label_smoothing,
            "scale": self.scale,
        }
