"""The models' training step: the gradients of a whole global batch, all-reduced once, then
clipped, then applied (`apply_global_gradients`), for `fit` (`GlobalClippingTrainStep`) and for
custom loops alike."""

from __future__ import annotations

import contextlib
import threading

import keras
import tensorflow as tf

# google-research/bert clips every step's gradients to this global norm, in pretraining
# and in fine-tuning.
CLIP_NORM = 1.0


def apply_global_gradients(
    optimizer, grads, variables, clip_norm: float | None = CLIP_NORM
) -> tf.Tensor:
    """Sums the replicas' gradients once, clips them by their global norm, then applies them.

    Keras optimizers clip each replica's gradients before summing them, so N devices would clip
    differently from one. Under loss scaling the norm is of unscaled gradients, and a non-finite
    one makes `LossScaleOptimizer` skip the step. Runs in a replica context (`strategy.run`).

    Args:
        optimizer: a Keras optimizer (or `LossScaleOptimizer`), built under the strategy's scope.
        grads: this replica's gradients, one per variable or None (left out), of a loss
            already divided by the global batch's denominators.
        variables: the trainable variables.
        clip_norm: the global norm to clip to; None: no clipping.

    Returns:
        The global norm of the summed, unscaled gradients.
    """
    context = tf.distribute.get_replica_context()
    variables = [v for g, v in zip(grads, variables) if g is not None]
    grads = [tf.convert_to_tensor(g) for g in grads if g is not None]
    if context.num_replicas_in_sync > 1:
        grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
    scale = tf.cast(getattr(optimizer, "dynamic_scale", 1.0), tf.float32)
    norm = tf.linalg.global_norm(grads) / scale
    if clip_norm is not None:
        factor = clip_norm / tf.maximum(norm, clip_norm)  # 1 when norm <= clip_norm; NaN stays NaN
        grads = [g * tf.cast(factor, g.dtype) for g in grads]
    with _AppliedAsSummed.of(optimizer).applying():
        optimizer.apply(grads, variables)
    return norm


class _AppliedAsSummed:
    """Keeps a Keras optimizer from all-reducing gradients that `apply_global_gradients` summed.

    Keras's TensorFlow optimizer sums the gradients it applies over the replicas, in
    `_all_reduce_sum_gradients`, and has no public switch against it (Keras 2's
    `experimental_aggregate_gradients`). This replaces that method on the optimizer
    (the inner one of a `LossScaleOptimizer`) with one that passes the gradients
    through while any `applying()` block is open, and all-reduces them as Keras does
    otherwise. The open blocks are counted, not flagged per thread: MirroredStrategy
    traces each replica in a thread of its own, and `LossScaleOptimizer` applies from
    replica threads that it starts itself.
    """

    def __init__(self, keras_all_reduce):
        self._keras_all_reduce = keras_all_reduce
        self._open = 0
        self._lock = threading.Lock()

    @classmethod
    def of(cls, optimizer) -> _AppliedAsSummed:
        """The hook of `optimizer`, installed on its first use."""
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        hook = vars(inner).get("_all_reduce_sum_gradients")
        if not isinstance(hook, cls):
            # An AttributeError here, not a silent second sum, if Keras renames its method.
            hook = cls(inner._all_reduce_sum_gradients)
            inner._all_reduce_sum_gradients = hook
        return hook

    def __call__(self, grads_and_vars):
        return list(grads_and_vars) if self._open else self._keras_all_reduce(grads_and_vars)

    @contextlib.contextmanager
    def applying(self):
        """Within the block, the optimizer applies the gradients it is given as they are."""
        with self._lock:
            self._open += 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1


class GlobalClippingTrainStep:
    """A `keras.Model` mixin: `fit` clips the global
    batch's gradients, through `apply_global_gradients`.

    Keras's own step lets the optimizer clip, which it does on each replica's
    gradients. This `train_step` is Keras's, with the update made by
    `apply_global_gradients`, so a run on N devices takes the steps of a run on
    one. Loss scaling, `add_loss` terms and the compiled metrics work as in Keras.
    """

    clip_norm: float | None = CLIP_NORM

    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            # Keras divides the loss by the replica count: the replicas' gradients sum
            # to the global batch's.
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
            scaled_loss = self.optimizer.scale_loss(loss)
        variables = self.trainable_variables
        apply_global_gradients(
            self.optimizer, tape.gradient(scaled_loss, variables), variables, self.clip_norm
        )
        self._update_loss_metric(loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _update_loss_metric(self, replica_loss, x) -> None:
        """Keras's `loss` metric, kept as Keras's own step keeps it: the mean loss over examples."""
        replicas = tf.distribute.get_replica_context().num_replicas_in_sync
        batch_size = tf.shape(tf.nest.flatten(x)[0])[0]
        loss_metric = next(metric for metric in self.metrics if metric.name == "loss")
        loss_metric.update_state(replica_loss * replicas, sample_weight=batch_size)
