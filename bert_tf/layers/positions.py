"""`gather_positions`: the vectors of a sequence at chosen positions."""

from __future__ import annotations

from keras import ops


def gather_positions(hidden_states, positions):
    """`hidden_states` `[batch, seq, hidden]` at int `positions` `[batch, n]`: `[batch, n, hidden]`.

    Example:
    >>> states = ops.reshape(ops.arange(12, dtype="float32"), (2, 3, 2))
    >>> gather_positions(states, ops.convert_to_tensor([[2], [0]])).numpy().tolist()
    [[[4.0, 5.0]], [[6.0, 7.0]]]
    """
    return ops.take_along_axis(hidden_states, ops.cast(positions, "int32")[..., None], axis=1)
