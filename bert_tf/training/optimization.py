"""BERT's optimizers: AdamW (or LAMB) with a linear warmup, then linear decay to zero."""

from __future__ import annotations

import functools

import keras
from keras import ops

from bert_tf.errors import UserInputError
from bert_tf.training.fused_adamw import FusedAdamW
from bert_tf.training.lamb import Lamb
from bert_tf.training.layerwise_adamw import LayerwiseAdamW

# google-research/bert excludes LayerNorm and bias variables from weight decay. Keras
# matches these patterns against the variable's short name: LayerNorm's `gamma` and
# `beta`, and every `bias`/`output_bias`.
NO_DECAY_PATTERNS = ("gamma", "beta", "bias")
# Adam's epsilon: google-research/bert's, and PyTorch's (Hugging Face's) for fine-tuning.
BERT_EPSILON, FINETUNING_EPSILON = 1e-6, 1e-8
# by --optimizer value (`pretraining.flags.OPTIMIZERS`)
OPTIMIZER_CLASSES = {"adamw": FusedAdamW, "lamb": Lamb}


@keras.saving.register_keras_serializable(package="bert_tf")
class LinearWarmup(keras.optimizers.schedules.LearningRateSchedule):
    """`peak * step / warmup_steps` for the first `warmup_steps`, then `after_warmup(step)`, or
    `after_warmup(step - warmup_steps)` with `decay_from_warmup`.

    Keras has the decay (`PolynomialDecay`) but no warmup wrapper for it.

    Example:
    >>> decay = keras.optimizers.schedules.PolynomialDecay(1e-4, 1000, end_learning_rate=0.0)
    >>> schedule = LinearWarmup(decay, warmup_steps=100, peak_learning_rate=1e-4)
    >>> round(float(schedule(50)), 7), round(float(schedule(500)), 7)
    (5e-05, 5e-05)
    """

    def __init__(
        self,
        after_warmup,
        warmup_steps: int,
        peak_learning_rate: float,
        decay_from_warmup: bool = False,
    ):
        self.after_warmup = after_warmup
        self.warmup_steps = warmup_steps
        self.peak_learning_rate = peak_learning_rate
        self.decay_from_warmup = decay_from_warmup

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warmup = self.peak_learning_rate * step / max(self.warmup_steps, 1)
        decay_step = step - self.warmup_steps if self.decay_from_warmup else step
        return ops.where(step < self.warmup_steps, warmup, self.after_warmup(decay_step))

    def get_config(self):
        return {
            "after_warmup": keras.saving.serialize_keras_object(self.after_warmup),
            "warmup_steps": self.warmup_steps,
            "peak_learning_rate": self.peak_learning_rate,
            "decay_from_warmup": self.decay_from_warmup,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(
            config, after_warmup=keras.saving.deserialize_keras_object(config["after_warmup"])
        )
        return cls(**config)


def warmup_linear_decay(
    learning_rate: float,
    num_train_steps: int,
    num_warmup_steps: int,
    decay_from_warmup: bool = False,
):
    """Linear warmup to `learning_rate`, then linear decay to 0 at `num_train_steps`.

    google-research/bert's decay is the line from `learning_rate` at step 0, so warmup ends
    below the peak, at `1 - num_warmup_steps / num_train_steps` of it. With `decay_from_warmup`
    the line starts at the peak at the end of warmup (transformers'
    `get_linear_schedule_with_warmup`).
    """
    decay_steps = num_train_steps - num_warmup_steps if decay_from_warmup else num_train_steps
    decay = keras.optimizers.schedules.PolynomialDecay(
        learning_rate, decay_steps=max(decay_steps, 1), end_learning_rate=0.0, power=1.0
    )
    if not num_warmup_steps:
        return decay
    return LinearWarmup(decay, num_warmup_steps, learning_rate, decay_from_warmup)


def bert_optimizer(
    optimizer_class,
    learning_rate: float,
    num_train_steps: int,
    num_warmup_steps: int,
    weight_decay: float,
    loss_scale: bool,
    epsilon: float = BERT_EPSILON,
    decay_from_warmup: bool = False,
) -> keras.optimizers.Optimizer:
    """`optimizer_class` (an AdamW-like Keras optimizer) with BERT's settings, as in the paper.

    β1 0.9, β2 0.999, ε `epsilon`, weight decay (decoupled for AdamW, inside the trust ratio
    for `Lamb`) but not on LayerNorm or biases, and the warmup + linear-decay schedule
    (`warmup_linear_decay`). No gradient clipping: the training
    step clips the gradients of the whole global batch (`bert_tf.models.train_step`).
    `loss_scale` wraps the optimizer in dynamic loss scaling, for float16.
    """
    optimizer = optimizer_class(
        learning_rate=warmup_linear_decay(
            learning_rate, num_train_steps, num_warmup_steps, decay_from_warmup
        ),
        beta_1=0.9,
        beta_2=0.999,
        epsilon=epsilon,
        weight_decay=weight_decay,
    )
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_PATTERNS))
    return keras.optimizers.LossScaleOptimizer(optimizer) if loss_scale else optimizer


def create_optimizer(
    name: str,
    learning_rate: float,
    num_train_steps: int,
    num_warmup_steps: int,
    weight_decay: float = 0.01,
    loss_scale: bool = False,
) -> keras.optimizers.Optimizer:
    """BERT's pretraining optimizer: adamw, or lamb (layer-wise adaptive, You et al.: `Lamb`); see
    `bert_optimizer`."""
    if name not in OPTIMIZER_CLASSES:
        raise UserInputError(
            f"`optimizer` must be one of {', '.join(OPTIMIZER_CLASSES)}; got {name!r}"
        )
    return bert_optimizer(
        OPTIMIZER_CLASSES[name],
        learning_rate,
        num_train_steps,
        num_warmup_steps,
        weight_decay,
        loss_scale,
    )


def create_finetuning_optimizer(
    learning_rate: float,
    num_train_steps: int,
    num_warmup_steps: int,
    variable_depths: dict[str, int],
    num_layers: int,
    layerwise_lr_decay: float = 1.0,
    unfreeze_every_steps: int = 0,
    weight_decay: float = 0.01,
    loss_scale: bool = False,
    google_bert: bool = False,
) -> keras.optimizers.Optimizer:
    """The fine-tuning AdamW (`bert_optimizer`), with optional per-layer learning rates.

    By default ε is 1e-8, added after Adam's bias correction, and the decay starts from the
    peak at the end of warmup, as in PyTorch and transformers: google-research/bert's ε 1e-6
    (`google_bert`), added before it as Keras does, is of the order of the lower layers'
    gradients and shrinks their steps, and its decay (`warmup_linear_decay`) lowers the
    learning rate throughout. `LayerwiseAdamW`'s layer-wise decay and gradual unfreezing
    are both off by default.
    """
    layerwise_adamw = functools.partial(
        LayerwiseAdamW,
        variable_depths,
        num_layers,
        layerwise_lr_decay,
        unfreeze_every_steps,
        epsilon_after_bias_correction=not google_bert,
    )
    epsilon = BERT_EPSILON if google_bert else FINETUNING_EPSILON
    return bert_optimizer(
        layerwise_adamw,
        learning_rate,
        num_train_steps,
        num_warmup_steps,
        weight_decay,
        loss_scale,
        epsilon,
        decay_from_warmup=not google_bert,
    )


def current_learning_rate(optimizer: keras.optimizers.Optimizer):
    """The learning rate the next update will use (unwrapping loss scaling)."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    return inner.learning_rate
