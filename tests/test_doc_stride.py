"""The exported span model's doc-stride windows (TensorFlow) are run_squad's (numpy): the same
windows and the same max-context tokens, for every small context, window size and stride."""

import itertools

import numpy as np
import tensorflow as tf

from bert_tf.data.doc_stride import doc_stride_windows, window_spans
from bert_tf.data.squad import _max_context

CONTEXT_LENGTHS, WINDOW_SIZES, STRIDES = range(40), range(1, 12), range(1, 14)


def numpy_windows(num_tokens: int, max_tokens: int, stride: int) -> list[tuple[list, list]]:
    """(tokens, is_max_context) of each window, as run_squad cuts them."""
    starts, lengths = window_spans(num_tokens, max_tokens, stride)
    max_context = _max_context(starts, lengths, num_tokens)  # [w, tokens]
    return [
        (list(range(first, first + n)), max_context[j, first : first + n].tolist())
        for j, (first, n) in enumerate(zip(starts, lengths))
    ]


def tensorflow_windows(cases: list[tuple[int, int]], stride: int) -> list[list[tuple[list, list]]]:
    """For each (context length, window size) of `cases`, in one batch: (tokens, is_max_context) of
    each window, tokens counted from the context's start."""
    context_lengths, max_doc_tokens = (tf.constant(column, tf.int64) for column in zip(*cases))
    windows = doc_stride_windows(context_lengths, max_doc_tokens, stride)
    # where each context starts
    offset = np.cumsum(context_lengths.numpy()) - context_lengths.numpy()
    got = [[] for _ in cases]
    for example, tokens, flags in zip(
        windows.example.numpy(), windows.doc_tokens.to_list(), windows.is_max_context.to_list()
    ):
        got[example].append(([t - offset[example] for t in tokens], flags))
    return got


def test_the_exported_windows_are_run_squads():
    # [(context length, window size)]
    cases = list(itertools.product(CONTEXT_LENGTHS, WINDOW_SIZES))
    for stride in STRIDES:
        for (num_tokens, max_tokens), got in zip(cases, tensorflow_windows(cases, stride)):
            assert got == numpy_windows(num_tokens, max_tokens, stride), (
                num_tokens,
                max_tokens,
                stride,
            )
