"""Whole words for whole-word masking: `##` pieces, and Chinese words from a word segmenter.

BERT's tokenizer makes every CJK character a token of its own, so on Chinese
the `##` grouping masks single characters. With a segmenter (jieba, or its
Rust port rjieba), the CJK characters of one segmented word form one word, as
in Chinese-BERT-wwm. Other tokens group as before: a token and its `##` pieces.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

import numpy as np

from bert_tf.errors import UserInputError
from bert_tf.tokenization import unicode_tables

SEGMENTERS = ("none", "jieba", "rjieba")
_CODEPOINTS = 0x30000  # past the last CJK range
_COMPATIBILITY_RANGES = ((0xF900, 0xFAFF), (0x2F800, 0x2FA1F))  # CJK ranges that NFD changes


class SegmenterError(UserInputError):
    """A word segmenter that is not known or not installed."""


def segmenter(name: str) -> Callable[[str], list[str]]:
    """`name` ("jieba" or "rjieba") -> a function from a line to its words, which join to the line.

    Raises:
      SegmenterError: an unknown name, or the package is not installed.
    """
    if name not in SEGMENTERS[1:]:
        raise SegmenterError(
            f"unknown word segmenter {name!r}: use one of {', '.join(SEGMENTERS[1:])}"
        )
    try:
        if name == "rjieba":
            import rjieba  # pylint: disable=import-outside-toplevel

            return rjieba.cut
        import jieba  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise SegmenterError(
            f"word segmenter {name!r} is not installed: pip install {name}"
        ) from None
    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


class WordGrouper:
    """Marks the tokens that continue the previous token's word.

    Args:
      tokens: the vocab's tokens, by id.
      do_lower_case: the tokenizer's casing (it decides how a CJK character is looked up).
      word_segmenter: "none" (a token and its `##` pieces), "jieba" or "rjieba".
    """

    def __init__(self, tokens: Sequence[str], do_lower_case: bool, word_segmenter: str = "none"):
        self.is_piece = np.array([t.startswith("##") for t in tokens])  # [vocab]
        self._cut = None if word_segmenter == "none" else segmenter(word_segmenter)
        # A CJK character is a token of its own: its id, if the vocab has it (else [UNK]).
        self.is_cjk_token = np.array([unicode_tables.is_cjk_char(t) for t in tokens])  # [vocab]
        # [codepoints]: a CJK character that is a token
        self._cjk_in_vocab = np.zeros(_CODEPOINTS, bool)
        self._cjk_in_vocab[[ord(t) for t in np.array(tokens, object)[self.is_cjk_token]]] = True
        if do_lower_case:  # NFD maps the compatibility ideographs to unified ones
            in_vocab = set(tokens)
            for first, last in _COMPATIBILITY_RANGES:
                for codepoint in range(first, last + 1):
                    self._cjk_in_vocab[codepoint] = (
                        unicode_tables.normalize_char(chr(codepoint), True) in in_vocab
                    )

    def continues(self, lines: Sequence[str], token_ids: np.ndarray) -> np.ndarray:
        """Whether each token continues the word of the token before it, bool `[tokens]`.

        Args:
          lines: the texts that were tokenized.
          token_ids: their tokens, flat over the lines `[tokens]`.
        """
        continues = self.is_piece[token_ids]
        if self._cut is None or not len(token_ids):
            return continues
        words = [word for line in lines for word in self._cut(line)]
        codepoints = np.frombuffer("".join(words).encode("utf-32-le"), np.uint32)
        word_of_char = np.repeat(
            np.arange(len(words)), np.fromiter(map(len, words), np.int64, len(words))
        )
        # The in-vocab CJK characters of the text are, in order, the CJK tokens.
        cjk_chars = np.flatnonzero(self._cjk_in_vocab[np.minimum(codepoints, _CODEPOINTS - 1)])
        cjk_tokens = np.flatnonzero(self.is_cjk_token[token_ids])
        if len(cjk_chars) != len(cjk_tokens):
            raise RuntimeError(
                f"{len(cjk_chars)} CJK characters of the vocab in the text, but "
                f"{len(cjk_tokens)} CJK tokens: the tokenizer's casing differs"
            )
        word = word_of_char[cjk_chars]
        # Same word, and adjacent tokens (word ids differ across lines, so lines never join).
        same = (word[1:] == word[:-1]) & (cjk_tokens[1:] == cjk_tokens[:-1] + 1)
        continues[cjk_tokens[1:][same]] = True
        return continues
