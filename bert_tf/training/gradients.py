"""Applying the gradients of a whole global batch: all-reduce, then clip, then update."""

from __future__ import annotations

import tensorflow as tf


def apply_global_gradients(optimizer, grads, variables, clip_norm: float | None = 1.0) -> tf.Tensor:
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

    Must run in a replica context (inside `strategy.run`). Returns the global norm.
    """
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync
    grads = [tf.convert_to_tensor(g) for g in grads]
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
