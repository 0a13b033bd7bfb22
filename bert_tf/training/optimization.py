"""BERT's optimizers: AdamW (or LAMB) with a linear warmup, then linear decay to zero."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.training.layerwise_adamw import LayerwiseAdamW

# google-research/bert excludes LayerNorm and bias variables from weight decay. Keras
# matches these patterns against the variable's short name: LayerNorm's `gamma` and
# `beta`, and every `bias`/`output_bias`.
NO_DECAY_PATTERNS = ("gamma", "beta", "bias")
OPTIMIZERS = ("adamw", "lamb")


@keras.saving.register_keras_serializable(package="bert_tf")
class LinearWarmup(keras.optimizers.schedules.LearningRateSchedule):
    """`peak * step / warmup_steps` for the first `warmup_steps`, then `after_warmup(step)`.

    Keras has the decay (`PolynomialDecay`) but no warmup wrapper for it.

    Example:
    >>> decay = keras.optimizers.schedules.PolynomialDecay(1e-4, 1000, end_learning_rate=0.0)
    >>> schedule = LinearWarmup(decay, warmup_steps=100, peak_learning_rate=1e-4)
    >>> round(float(schedule(50)), 7), round(float(schedule(500)), 7)
    (5e-05, 5e-05)
    """

    def __init__(self, after_warmup, warmup_steps: int, peak_learning_rate: float):
        self.after_warmup = after_warmup
        self.warmup_steps = warmup_steps
        self.peak_learning_rate = peak_learning_rate

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warmup = self.peak_learning_rate * step / max(self.warmup_steps, 1)
        return ops.where(step < self.warmup_steps, warmup, self.after_warmup(step))

    def get_config(self):
        return {
            "after_warmup": keras.saving.serialize_keras_object(self.after_warmup),
            "warmup_steps": self.warmup_steps,
            "peak_learning_rate": self.peak_learning_rate,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config, after_warmup=keras.saving.deserialize_keras_object(config["after_warmup"]))
        return cls(**config)


def warmup_linear_decay(learning_rate: float, num_train_steps: int, num_warmup_steps: int):
    """google-research/bert's schedule: linear warmup, then linear decay to 0 at `num_train_steps`."""
    decay = keras.optimizers.schedules.PolynomialDecay(
        learning_rate, decay_steps=max(num_train_steps, 1), end_learning_rate=0.0, power=1.0)
    return LinearWarmup(decay, num_warmup_steps, learning_rate) if num_warmup_steps else decay


def create_optimizer(name: str, learning_rate: float, num_train_steps: int, num_warmup_steps: int,
                     weight_decay: float = 0.01, loss_scale: bool = False) -> keras.optimizers.Optimizer:
    """BERT's optimizer on the warmup + linear-decay schedule.

    adamw: β1 0.9, β2 0.999, ε 1e-6, decoupled weight decay (not on LayerNorm or
    biases), as in the paper. lamb: the same settings, layer-wise adaptive (You et al.).
    Gradient clipping (global norm 1.0) is applied by the training step to the
    gradients of the whole global batch, so it is not set here.
    `loss_scale` wraps the optimizer in dynamic loss scaling, for float16.
    """
    schedule = warmup_linear_decay(learning_rate, num_train_steps, num_warmup_steps)
    kwargs = dict(learning_rate=schedule, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                  weight_decay=weight_decay)
    if name == "adamw":
        optimizer = keras.optimizers.AdamW(**kwargs)
    elif name == "lamb":
        optimizer = keras.optimizers.Lamb(**kwargs)
    else:
        raise ValueError(f"--optimizer must be one of {', '.join(OPTIMIZERS)}; got {name!r}")
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_PATTERNS))
    if loss_scale:
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def create_finetuning_optimizer(learning_rate: float, num_train_steps: int, num_warmup_steps: int,
                                variable_depths: dict[str, int], num_layers: int,
                                layerwise_lr_decay: float = 1.0, unfreeze_every_steps: int = 0,
                                weight_decay: float = 0.01, clip_norm: float | None = 1.0,
                                loss_scale: bool = False) -> keras.optimizers.Optimizer:
    """google-research/bert's fine-tuning AdamW, with optional per-layer learning rates.

    The same settings and schedule as `create_optimizer("adamw", ...)`, global-norm
    clipping at `clip_norm` (Keras clips before the update), and `LayerwiseAdamW`'s
    layer-wise decay and gradual unfreezing (both off by default).
    """
    optimizer = LayerwiseAdamW(
        variable_depths, num_layers, layerwise_lr_decay, unfreeze_every_steps,
        learning_rate=warmup_linear_decay(learning_rate, num_train_steps, num_warmup_steps),
        beta_1=0.9, beta_2=0.999, epsilon=1e-6, weight_decay=weight_decay, global_clipnorm=clip_norm)
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_PATTERNS))
    return keras.optimizers.LossScaleOptimizer(optimizer) if loss_scale else optimizer


def current_learning_rate(optimizer: keras.optimizers.Optimizer):
    """The learning rate the next update will use (unwrapping loss scaling)."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    return inner.learning_rate
