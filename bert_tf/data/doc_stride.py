"""Doc-stride windows over a long token sequence, as google-research/bert's run_squad.py cuts them.

Windows of at most `max_tokens` tokens, `stride` apart, and for each token the window where it
has the most context on both sides. One concept in two forms: numpy (`window_spans`,
`context_score`) for the SQuAD contexts and over-long CoNLL sentences the encoders cut, and
graph ops on ragged token batches (`doc_stride_windows`) for the exported span model's text
signature; a test checks that they agree.

Example:
>>> starts, lengths = window_spans(10, max_tokens=4, stride=3)
>>> starts.tolist(), lengths.tolist()
([0, 3, 6], [4, 4, 4])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf


def window_spans(num_tokens: int, max_tokens: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Window starts and lengths `[w]` covering `num_tokens` tokens; at least one window."""
    step = min(stride, max_tokens)
    count = 1 + max(0, -(-(num_tokens - max_tokens) // step))
    starts = np.arange(count) * step
    return starts, np.minimum(max_tokens, num_tokens - starts)


def context_score(offset, window_length):
    """How much context a token at `offset` in a window of `window_length` has.

    min(tokens before, tokens after) + 0.01 * window length: the higher, the
    better the window sees the token (ties go to the longer window).
    """
    return np.minimum(offset, window_length - 1 - offset) + 0.01 * window_length


class DocWindows(NamedTuple):
    """Windows of the contexts, one row per window (`[windows, ...]`).

    example: the example (row of the input batch) each window belongs to.
    doc_tokens: ragged `[windows, (tokens)]`, flat indices into the contexts' flat token values.
    is_max_context: ragged like `doc_tokens`: the window is the one where the token has the
        most context on both sides (google-research/bert's `_check_is_max_context`; ties go
        to the earlier window), so only that window may start an answer there.
    """

    example: tf.Tensor
    doc_tokens: tf.RaggedTensor
    is_max_context: tf.RaggedTensor


def doc_stride_windows(context_lengths, max_doc_tokens, doc_stride: int) -> DocWindows:
    """Splits each context of `context_lengths[i]` tokens into windows of `max_doc_tokens[i]`.

    Windows start every `min(max_doc_tokens, doc_stride)` tokens until one reaches the end,
    as in run_squad.py; an empty context gets one empty window.

    Example:
    >>> w = doc_stride_windows(tf.constant([5], tf.int64), tf.constant([3], tf.int64), 2)
    >>> w.doc_tokens.to_list()
    [[0, 1, 2], [2, 3, 4]]
    """
    step = tf.minimum(max_doc_tokens, doc_stride)  # [batch]
    beyond_first = tf.maximum(context_lengths - max_doc_tokens, 0)
    num_windows = 1 + (beyond_first + step - 1) // step  # [batch]
    windows = tf.ragged.range(num_windows)  # [batch, (windows)]
    example = windows.value_rowids()  # [windows]
    start = windows.flat_values * tf.gather(step, example)
    length = tf.minimum(
        tf.gather(context_lengths, example) - start, tf.gather(max_doc_tokens, example)
    )
    # where each context starts in the flat values
    offset = tf.cumsum(context_lengths, exclusive=True)
    begin = tf.gather(offset, example) + start
    doc_tokens = tf.ragged.range(begin, begin + length)  # [windows, (tokens)]

    position = tf.ragged.range(length).flat_values
    window = doc_tokens.value_rowids()
    window_length = tf.gather(length, window)
    score = tf.cast(
        tf.minimum(position, window_length - 1 - position), tf.float32
    ) + 0.01 * tf.cast(window_length, tf.float32)
    token, total = doc_tokens.flat_values, tf.reduce_sum(context_lengths)
    is_best = score >= tf.gather(tf.math.unsorted_segment_max(score, token, total), token)
    first_best = tf.math.unsorted_segment_min(tf.where(is_best, window, tf.int64.max), token, total)
    is_max_context = doc_tokens.with_flat_values(is_best & (window == tf.gather(first_best, token)))
    return DocWindows(example, doc_tokens, is_max_context)
