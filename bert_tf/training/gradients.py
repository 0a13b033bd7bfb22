"""Applying the gradients of a whole global batch: all-reduce, then clip, then update."""

from __future__ import annotations

import keras
import tensorflow as tf

# google-research/bert clips every step's gradients to this global norm, in pretraining
# and in fine-tuning.
CLIP_NORM = 1.0


def apply_global_gradients(optimizer, grads, variables, clip_norm: float | None = CLIP_NORM) -> tf.Tensor:
    """Clips the global batch's gradients by their global norm, then applies them.

    Keras optimizers clip each replica's gradients before summing them across
    replicas, so a run on N devices would clip differently from a run on one. Here
    the replicas' gradients are summed first (the losses are already divided by
    the global batch's denominators), clipped once, and divided by the replica
    count, so the optimizer's own all-reduce sum restores exactly the clipped
    global gradient. On one replica there is no extra communication.

    Loss scaling (float16) is respected: the norm is measured on unscaled
    gradients, and a non-finite norm leaves the gradients non-finite so that
    `LossScaleOptimizer` skips the step and lowers its scale.

    Variables without a gradient (a pooler that the task head does not read) are
    left out. Must run in a replica context (inside `strategy.run`). Returns the
    global norm.
    """
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync
    variables = [v for g, v in zip(grads, variables) if g is not None]
    grads = [tf.convert_to_tensor(g) for g in grads if g is not None]
    if replicas > 1:
        grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
    scale = tf.cast(getattr(optimizer, "dynamic_scale", 1.0), tf.float32)
    norm = tf.linalg.global_norm(grads) / scale
    if clip_norm is not None:
        factor = clip_norm / tf.maximum(norm, clip_norm)  # 1 when norm <= clip_norm; NaN stays NaN
        grads = [g * tf.cast(factor, g.dtype) for g in grads]
    if replicas > 1:
        grads = [g / replicas for g in grads]
    optimizer.apply(grads, variables)
    return norm


class GlobalClippingTrainStep:
    """A `keras.Model` mixin: `fit` clips the global batch's gradients, through `apply_global_gradients`.

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
        apply_global_gradients(self.optimizer, tape.gradient(scaled_loss, variables), variables, self.clip_norm)
        self._update_loss_metric(loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _update_loss_metric(self, replica_loss, x) -> None:
        """Keras's `loss` metric, kept as Keras's own step keeps it: the mean loss over examples."""
        replicas = tf.distribute.get_replica_context().num_replicas_in_sync
        batch_size = tf.shape(tf.nest.flatten(x)[0])[0]
        loss_metric = next(metric for metric in self.metrics if metric.name == "loss")
        loss_metric.update_state(replica_loss * replicas, sample_weight=batch_size)
