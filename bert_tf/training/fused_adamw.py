"""`FusedAdamW`: Keras's AdamW, its update done by TensorFlow's fused Adam kernel."""

from __future__ import annotations

import keras
import tensorflow as tf
from keras import ops

from bert_tf.training.no_decay_patterns import KeepsNoDecayPatterns


@keras.saving.register_keras_serializable(package="bert_tf")
class FusedAdamW(KeepsNoDecayPatterns, keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` whose moment and weight updates run as one kernel per variable.

    Keras's Adam step is about ten elementwise ops, each a pass over memory the
    size of the variable; TensorFlow's `ResourceApplyAdam` makes one pass over the
    gradient, the variable and its two moments, with the same arithmetic:

        m = m + (1 - beta_1) * (g - m)
        v = v + (1 - beta_2) * (g² - v)
        w = w - lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)

    Weight decay is Keras's (decoupled, before the step), made in one pass over each
    variable instead of three (`decay_weights`); sparse gradients and `amsgrad` stay
    Keras's. The optimizer's variables are Keras's AdamW's, so
    checkpoints move freely between the two. XLA compiles the kernel too (TPU).

    Keras (and the kernel) add ε to `sqrt(v)`, before the bias correction, which makes it
    `1 / sqrt(1 - beta_2^t)` times larger in early steps: up to 30x at step 1. With
    `epsilon_after_bias_correction`, ε is added to the corrected `sqrt(v / (1 - beta_2^t))`, as
    in PyTorch's AdamW (sparse gradients are then made dense, and `amsgrad` is refused).

    Example:
    >>> optimizer = FusedAdamW(learning_rate=0.1, weight_decay=0.0)
    >>> variable = keras.Variable([1.0, 2.0])
    >>> optimizer.apply([keras.ops.convert_to_tensor([1.0, -1.0])], [variable])
    >>> [round(float(x), 4) for x in variable.numpy()]
    [0.9, 2.1]
    """

    def __init__(self, *args, epsilon_after_bias_correction: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if epsilon_after_bias_correction and self.amsgrad:
            raise ValueError("epsilon_after_bias_correction does not support amsgrad")
        self.epsilon_after_bias_correction = epsilon_after_bias_correction

    def _apply_weight_decay(self, variables):
        if self.weight_decay is None:
            return
        for variable in variables:
            if self._use_weight_decay(variable):
                decay_weights(variable, self.weight_decay, self.learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        if isinstance(gradient, tf.IndexedSlices) and self.epsilon_after_bias_correction:
            gradient = tf.convert_to_tensor(gradient)
        if isinstance(gradient, tf.IndexedSlices) or self.amsgrad:
            return super().update_step(gradient, variable, learning_rate)
        dtype = variable.dtype
        step = ops.cast(self.iterations + 1, dtype)
        beta2_power = ops.power(ops.cast(self.beta_2, dtype), step)
        epsilon = ops.cast(self.epsilon, dtype)
        if self.epsilon_after_bias_correction:
            # m / (sqrt(v) + ε sqrt(1 - β2^t)) * sqrt(1 - β2^t) = m / (sqrt(v / (1 - β2^t)) + ε)
            epsilon = epsilon * ops.sqrt(1 - beta2_power)
        index = self._get_variable_index(variable)
        # Inside a strategy's update, `handle` is this replica's copy of a mirrored variable.
        tf.raw_ops.ResourceApplyAdam(
            var=_handle(variable),
            m=_handle(self._momentums[index]),
            v=_handle(self._velocities[index]),
            beta1_power=ops.power(ops.cast(self.beta_1, dtype), step),
            beta2_power=beta2_power,
            lr=ops.cast(learning_rate, dtype),
            beta1=ops.cast(self.beta_1, dtype),
            beta2=ops.cast(self.beta_2, dtype),
            epsilon=epsilon,
            grad=ops.cast(gradient, dtype),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "epsilon_after_bias_correction": self.epsilon_after_bias_correction,
        }


def decay_weights(variable, weight_decay, learning_rate) -> None:
    """Decoupled weight decay, `w <- w * (1 - learning_rate * weight_decay)`: one pass over `w`,
    where Keras's `w - w * weight_decay * learning_rate` makes three (docs/design-notes.md)."""
    factor = 1 - ops.cast(learning_rate, variable.dtype) * ops.cast(weight_decay, variable.dtype)
    variable.assign(variable * factor)


def _handle(variable):
    """The resource handle of a Keras or TensorFlow variable."""
    return (variable.value if isinstance(variable, keras.Variable) else variable).handle
