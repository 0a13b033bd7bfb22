"""`LayerwiseAdamW`: AdamW with a learning rate per layer, for layer-wise decay and unfreezing."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.errors import UserInputError
from bert_tf.training.fused_adamw import FusedAdamW, decay_weights


@keras.saving.register_keras_serializable(package="bert_tf")
class LayerwiseAdamW(FusedAdamW):
    """AdamW whose learning rate (and so its decoupled weight decay) is scaled per layer.

    Each variable has a depth: 0 for the embeddings, `i + 1` for Transformer
    block `i`, and `top = num_layers + 1` for the pooler and the task head
    (`bert_tf.finetuning.layer_depths` computes them). At step `t`, a variable at
    depth `d` is updated with `learning_rate * multiplier(d, t)`, where

        multiplier = layerwise_lr_decay ** (top - d)            (discriminative fine-tuning)
                     * (t >= (top - d) * unfreeze_every_steps)  (gradual unfreezing, top down)

    With `layerwise_lr_decay=1` and `unfreeze_every_steps=0` it is Keras's AdamW (`FusedAdamW`).
    A frozen layer's update and weight decay are both zero.

    Args:
        variable_depths: `variable.path -> depth`; unlisted variables are at the top.
        num_layers: the encoder's `num_hidden_layers`.
        layerwise_lr_decay: factor per layer below the top, in (0, 1].
        unfreeze_every_steps: steps between unfreezing one more layer; 0 trains all from the start.
        **kwargs: `keras.optimizers.AdamW`'s arguments, and `no_decay_patterns`
            (`KeepsNoDecayPatterns`).

    Example:
    >>> optimizer = LayerwiseAdamW({"encoder/embeddings/word": 0}, num_layers=2,
    ...                             layerwise_lr_decay=0.5, learning_rate=1e-3)
    >>> float(optimizer.learning_rate_multiplier(0, step=0))
    0.125
    """

    def __init__(
        self,
        variable_depths: dict[str, int],
        num_layers: int,
        layerwise_lr_decay: float = 1.0,
        unfreeze_every_steps: int = 0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0.0 < layerwise_lr_decay <= 1.0:
            raise UserInputError(f"layerwise_lr_decay must be in (0, 1]; got {layerwise_lr_decay}")
        self.variable_depths = dict(variable_depths)
        self.num_layers = num_layers
        self.layerwise_lr_decay = layerwise_lr_decay
        self.unfreeze_every_steps = unfreeze_every_steps
        # Weight decay is applied in `update_step`, with the variable's own learning rate.
        self.decoupled_weight_decay, self.weight_decay = self.weight_decay, None

    def learning_rate_multiplier(self, depth: int, step):
        """The factor on the learning rate of a variable at `depth`, at optimizer step `step`."""
        below_top = self.num_layers + 1 - depth
        multiplier = ops.convert_to_tensor(self.layerwise_lr_decay**below_top, "float32")
        if self.unfreeze_every_steps:
            unfrozen = ops.cast(step, "int64") >= below_top * self.unfreeze_every_steps
            multiplier = multiplier * ops.cast(unfrozen, "float32")
        return multiplier

    def build(self, variables):
        super().build(variables)
        # By Keras's variable index, which update_step can look up (the variable it gets may be
        # the backend's, without a path).
        self._depths = [self.variable_depths.get(v.path, self.num_layers + 1) for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        depth = self._depths[self._get_variable_index(variable)]
        learning_rate = ops.cast(learning_rate, variable.dtype) * ops.cast(
            self.learning_rate_multiplier(depth, self.iterations), variable.dtype
        )
        if self.decoupled_weight_decay and self._use_weight_decay(variable):
            decay_weights(variable, self.decoupled_weight_decay, learning_rate)
        super().update_step(gradient, variable, learning_rate)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "weight_decay": self.decoupled_weight_decay,
                "variable_depths": self.variable_depths,
                "num_layers": self.num_layers,
                "layerwise_lr_decay": self.layerwise_lr_decay,
                "unfreeze_every_steps": self.unfreeze_every_steps,
            }
        )
        return config
