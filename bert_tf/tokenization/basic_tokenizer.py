"""`BasicTokenizer`: google-research/bert's word splitting as graph ops, with offsets."""

from __future__ import annotations

import re

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.bert_normalizer import BertNormalizer, in_ranges, ranges_tensors
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

    `tokenize` splits text that holds no special token (no `[`, or all of it with
    `split_special_tokens`) on its code points instead of with a regex: several
    times faster on Chinese, where most characters are words of their own.

    Args:
        lower_case: lower-case and strip accents (`BertNormalizer`), as `do_lower_case`.
        split_special_tokens: split the special tokens at the brackets, as the reference does.
        name: the `tf.Module`'s name.

    Example:
    >>> BasicTokenizer(lower_case=True).tokenize(["Héllo, [MASK] wörld!"]).to_list()
    [[b'hello', b',', b'[MASK]', b'world', b'!']]
    """

    def __init__(
        self, lower_case: bool, split_special_tokens: bool = False, name: str | None = None
    ):
        super().__init__(name=name)
        self.lower_case = lower_case
        self.split_special_tokens = split_special_tokens
        self.normalizer = BertNormalizer(lower_case)
        self._special_tokens = "|".join(map(re.escape, SPECIAL_TOKENS))
        isolated = unicode_tables.regex_class(unicode_tables.isolated_ranges())
        # Special tokens first: RE2 takes the first alternative that matches at a position.
        self._keep_pattern = (
            isolated if split_special_tokens else f"{self._special_tokens}|{isolated}"
        )
        self._split_pattern = f" +|{self._keep_pattern}"
        self._isolated = ranges_tensors(unicode_tables.isolated_ranges())

    def tokenize(self, texts) -> tf.RaggedTensor:
        """Splits UTF-8 strings into words.

        Args:
            texts: UTF-8 strings `[batch]`, Python or `tf.string`.

        Returns:
            The words, strings ragged `[batch, (words)]`.
        """
        texts = tf.convert_to_tensor(texts, tf.string)
        if self.split_special_tokens:
            return self._split_codepoints(texts)
        # Only text with a "[" may hold a special token, which the regex keeps whole.
        plain = tf.strings.regex_full_match(texts, r"[^\[]*")
        plain_rows, other_rows = tf.where(plain)[:, 0], tf.where(~plain)[:, 0]
        words = tf.concat(
            [
                self._split_codepoints(tf.gather(texts, plain_rows)),
                self._split_regex(tf.gather(texts, other_rows)),
            ],
            0,
        )
        return tf.gather(words, tf.math.invert_permutation(tf.concat([plain_rows, other_rows], 0)))

    def _split_regex(self, texts) -> tf.RaggedTensor:
        words = tf_text.regex_split(
            self.normalizer.normalize(texts), self._split_pattern, self._keep_pattern
        )
        return self._lower(words)

    def _split_codepoints(self, texts) -> tf.RaggedTensor:
        """The regex split on code points, for text without special tokens: a word is a run of
        characters that are neither spaces nor isolated
        (punctuation, CJK), or one isolated character."""
        chars = self.normalizer.normalize_to_codepoints(texts)  # [batch, (chars)]
        values = chars.flat_values
        if self.lower_case:  # the normalizer leaves ASCII A-Z to the caller
            values = tf.where((values >= 65) & (values <= 90), values + 32, values)
        row = chars.value_rowids()  # [chars]
        isolated = in_ranges(values, self._isolated)
        kept = values != 32  # normalized whitespace is a space
        joins = kept & ~isolated  # a character that continues a word of such characters
        follows_joining = tf.concat([[False], joins], 0)[:-1] & (
            tf.concat([[-1], row], 0)[:-1] == row
        )
        start = kept & (isolated | ~follows_joining)
        word = tf.cumsum(tf.cast(start, tf.int64)) - 1  # [chars]: the word of each kept character
        num_words = tf.reduce_sum(tf.cast(start, tf.int64))
        word_chars = tf.RaggedTensor.from_value_rowids(
            tf.boolean_mask(values, kept),
            tf.boolean_mask(word, kept),
            nrows=num_words,
            validate=False,
        )
        return tf.RaggedTensor.from_value_rowids(
            tf.strings.unicode_encode(word_chars, "UTF-8"),
            tf.boolean_mask(row, start),
            nrows=chars.nrows(),
            validate=False,
        )

    def tokenize_with_offsets_map(self, texts):
        """Splits UTF-8 strings into words, with the words' offsets.

        Args:
            texts: UTF-8 strings `[batch]`, Python or `tf.string`.

        Returns:
            `(words, starts, ends, offsets_map)`: the words and their byte offsets into the
            normalized text, each ragged `[batch, (words)]`, and the map that takes those
            offsets back to `texts` (`self.normalizer.find_source_offsets`).
        """
        normalized, offsets_map = self.normalizer.normalize_with_offsets_map(texts)
        words, starts, ends = tf_text.regex_split_with_offsets(
            normalized, self._split_pattern, self._keep_pattern
        )
        return self._lower(words), starts, ends, offsets_map

    def _lower(self, words: tf.RaggedTensor) -> tf.RaggedTensor:
        """Lower-cases ASCII letters (the normalizer left them), but not in the special tokens."""
        if not self.lower_case:
            return words
        flat = words.flat_values
        if self.split_special_tokens:
            return words.with_flat_values(tf.strings.lower(flat))
        return words.with_flat_values(
            tf.where(
                tf.strings.regex_full_match(flat, self._special_tokens),
                flat,
                tf.strings.lower(flat),
            )
        )
