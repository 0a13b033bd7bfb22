"""`Lamb`: LAMB as its paper (You et al., 2019) and Model Garden have it, on Keras's optimizer."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.training.no_decay_patterns import KeepsNoDecayPatterns


@keras.saving.register_keras_serializable(package="bert_tf")
class Lamb(KeepsNoDecayPatterns, keras.optimizers.Lamb):
    """LAMB with the weight decay inside the trust
    ratio, and no trust ratio where there is no decay.

    For a variable `w` with gradient moments `m̂`, `v̂` (bias-corrected, as Adam):

        r = m̂ / (sqrt(v̂) + epsilon) + weight_decay * w
        w -= learning_rate * (||w|| / ||r||) * r

    Variables excluded from weight decay (`exclude_from_weight_decay`: BERT's LayerNorm
    and biases) take the plain Adam step `learning_rate * m̂ / (sqrt(v̂) + epsilon)`, as
    Model Garden excludes them from layer adaptation too. Keras's `Lamb` instead decays
    every weight outside the ratio (as AdamW) and adapts every variable, biases included.

    Example:
    >>> optimizer = Lamb(learning_rate=1e-3, weight_decay=0.01)
    >>> optimizer.exclude_from_weight_decay(var_names=["bias"])
    >>> kernel = keras.Variable([[1.0, 2.0], [3.0, 4.0]], name="kernel")
    >>> optimizer.apply([keras.ops.ones((2, 2))], [kernel])
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Applied in `update_step`, inside the trust ratio, not by Keras before it.
        self.lamb_weight_decay, self.weight_decay = self.weight_decay, None

    def update_step(self, gradient, variable, learning_rate):
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        step = ops.cast(self.iterations + 1, variable.dtype)
        m = self._momentums[self._get_variable_index(variable)]
        v = self._velocities[self._get_variable_index(variable)]
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign_add(v, (ops.square(gradient) - v) * (1 - self.beta_2))
        m_hat = m / (1 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
        v_hat = v / (1 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
        if self.lamb_weight_decay and self._use_weight_decay(variable):
            update = update + ops.cast(self.lamb_weight_decay, variable.dtype) * variable
            w_norm, r_norm = (
                ops.norm(ops.reshape(variable, [-1])),
                ops.norm(ops.reshape(update, [-1])),
            )
            # 1 for an all-zero variable
            ratio = ops.where((w_norm > 0) & (r_norm > 0), w_norm / r_norm, 1.0)
            update = ratio * update
        self.assign_sub(variable, lr * update)

    def get_config(self):
        return {**super().get_config(), "weight_decay": self.lamb_weight_decay}
