"""`BasicTokenizer`: google-research/bert's word splitting as graph ops, with offsets."""

from __future__ import annotations

import re

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.bert_normalizer import BertNormalizer
from bert_tf.tokenization.vocab import SPECIAL_TOKENS


class BasicTokenizer(tf.Module):
    """google-research/bert's BasicTokenizer (before WordPiece) on TF and tensorflow-text ops.

    `BertNormalizer`, then a regex split on spaces that keeps each punctuation
    and CJK character (the reference's classes) as a word of its own, then
    lower-casing. Unlike the reference, the special tokens (`[CLS]`, `[SEP]`,
    `[MASK]`, `[UNK]`, `[PAD]`, case-sensitive) stay one word wherever they are;
    with `split_special_tokens` they are split at the brackets as the reference
    splits them (for corpus text, where they are words like any other).
    Ops used: those of `BertNormalizer`, RegexSplitWithOffsets, RegexFullMatch,
    StringLower.

    Example:
    >>> BasicTokenizer(lower_case=True).tokenize(["Héllo, [MASK] wörld!"]).to_list()
    [[b'hello', b',', b'[MASK]', b'world', b'!']]
    """

    def __init__(self, lower_case: bool, split_special_tokens: bool = False, name: str | None = None):
        super().__init__(name=name)
        self.lower_case = lower_case
        self.split_special_tokens = split_special_tokens
        self.normalizer = BertNormalizer(lower_case)
        self._special_tokens = "|".join(map(re.escape, SPECIAL_TOKENS))
        isolated = unicode_tables.regex_class(unicode_tables.isolated_ranges())
        # Special tokens first: RE2 takes the first alternative that matches at a position.
        self._keep_pattern = isolated if split_special_tokens else f"{self._special_tokens}|{isolated}"
        self._split_pattern = f" +|{self._keep_pattern}"

    def tokenize(self, texts) -> tf.RaggedTensor:
        """UTF-8 strings `[batch]` -> words, ragged `[batch, (words)]`."""
        words = tf_text.regex_split(self.normalizer.normalize(texts), self._split_pattern, self._keep_pattern)
        return self._lower(words)

    def tokenize_with_offsets_map(self, texts):
        """UTF-8 strings `[batch]` -> (words, starts, ends, offsets map).

        `starts`/`ends` are the words' byte offsets into the normalized text; the
        offsets map takes them back to `texts` with
        `self.normalizer.find_source_offsets`.
        """
        normalized, offsets_map = self.normalizer.normalize_with_offsets_map(texts)
        words, starts, ends = tf_text.regex_split_with_offsets(
            normalized, self._split_pattern, self._keep_pattern)
        return self._lower(words), starts, ends, offsets_map

    def _lower(self, words: tf.RaggedTensor) -> tf.RaggedTensor:
        """Lower-cases ASCII letters (the normalizer left them for now), but not in the special tokens."""
        if not self.lower_case:
            return words
        flat = words.flat_values
        if self.split_special_tokens:
            return words.with_flat_values(tf.strings.lower(flat))
        return words.with_flat_values(tf.where(
            tf.strings.regex_full_match(flat, self._special_tokens), flat, tf.strings.lower(flat)))
