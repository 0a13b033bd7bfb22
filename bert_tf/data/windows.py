"""Doc-stride windows over a long token sequence, as google-research/bert's run_squad.py cuts them.

SQuAD contexts and over-long CoNLL sentences share them: windows of at most
`max_tokens` tokens, `stride` apart, and for each token the window where it has
the most context on both sides.

Example:
>>> starts, lengths = window_spans(10, max_tokens=4, stride=3)
>>> starts.tolist(), lengths.tolist()
([0, 3, 6], [4, 4, 4])
"""

from __future__ import annotations

import numpy as np


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
