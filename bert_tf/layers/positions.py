"""`gather_positions`: the vectors of a sequence at chosen positions."""

from __future__ import annotations

import tensorflow as tf


def gather_positions(hidden_states, positions):
    """The vectors of `hidden_states` at `positions`, in one gather of whole rows.

    Args:
        hidden_states: `[batch, seq, hidden]`.
        positions: int `[batch, n]`, indices into `seq`.

    Returns:
        `[batch, n, hidden]`: row `positions[b, i]` of `hidden_states[b]` at `[b, i]`.

    Example:
    >>> states = tf.reshape(tf.range(12, dtype="float32"), (2, 3, 2))
    >>> gather_positions(states, tf.constant([[2], [0]])).numpy().tolist()
    [[[4.0, 5.0]], [[6.0, 7.0]]]
    """
    # `keras.ops.take_along_axis` would broadcast the positions to [batch, n, hidden] int64
    # indices and transpose the whole sequence to gather along its last axis, forward and backward.
    return tf.gather(hidden_states, tf.cast(positions, tf.int32), batch_dims=1)
