"""`BertNormalizer`: BasicTokenizer's character normalization as graph ops, with offsets."""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from bert_tf.tokenization import unicode_tables


class _OffsetsMap(NamedTuple):
    """Where each input character went. All flat over the batch's characters."""

    target_starts: tf.Tensor  # its first byte in the normalized batch, concatenated
    target_row_starts: tf.Tensor  # [batch]: each normalized row's first byte, concatenated
    # Its span in its input string, in bytes and in characters. A span ends where
    # the next character that is not removed starts, so it takes in the accents
    # and format characters that follow it.
    byte_starts: tf.Tensor
    byte_ends: tf.Tensor
    char_starts: tf.Tensor
    char_ends: tf.Tensor


def _utf8_length(codepoints: tf.Tensor) -> tf.Tensor:
    codepoints = tf.cast(codepoints, tf.int64)
    return 1 + sum(tf.cast(codepoints >= bound, tf.int64) for bound in (0x80, 0x800, 0x10000))


def ranges_tensors(ranges):
    """`(first, last)` code point ranges -> (firsts, lasts) int32 constants, for `in_ranges`."""
    firsts, lasts = zip(*ranges)
    return tf.constant(firsts, tf.int32), tf.constant(lasts, tf.int32)


def in_ranges(values: tf.Tensor, ranges) -> tf.Tensor:
    """Whether each int32 code point of `values` lies in one of `ranges` (from `ranges_tensors`)."""
    firsts, lasts = ranges
    index = tf.searchsorted(firsts, values, side="right") - 1
    return (index >= 0) & (values <= tf.gather(lasts, tf.maximum(index, 0)))


def _encode(codepoints: tf.Tensor, row_splits: tf.Tensor) -> tf.Tensor:
    """Flat code points and their row splits -> UTF-8 strings `[batch]`."""
    return tf.strings.unicode_encode(
        tf.RaggedTensor.from_row_splits(codepoints, row_splits, validate=False), "UTF-8"
    )


def _exclusive_cumsum(values: tf.Tensor) -> tf.Tensor:
    """`[0, v0, v0 + v1, ...]`, one longer than `values`."""
    return tf.concat([tf.zeros([1], values.dtype), tf.cumsum(values)], 0)


class BertNormalizer(tf.Module):
    """The per-character part of google-research/bert's BasicTokenizer, as TF ops.

    Exactly as the reference (see `unicode_tables`), it drops NUL, U+FFFD and
    control characters and turns whitespace into spaces; with `lower_case` it
    also applies Python's `str.lower` (with its final-sigma rule), NFD, and drops
    nonspacing marks. ASCII A-Z keep their case, for the caller to lower-case
    with `tf.strings.lower` once it has found the special tokens. The offsets map
    leads from normalized offsets back to the input. Ops used: UnicodeDecodeWithOffsets,
    UnicodeEncode, LowerBound/UpperBound (`tf.searchsorted`) and other core ops.

    The one rule not reproduced is NFD's canonical reordering across characters,
    which only matters here for two spacing combining marks (Mc, e.g. musical
    symbols or Javanese viramas) out of canonical order.

    Args:
        lower_case: also lower-case (all but ASCII A-Z) and strip accents, as `do_lower_case`.
        name: the `tf.Module`'s name.

    Example:
    >>> normalizer = BertNormalizer(lower_case=True)
    >>> text, offsets_map = normalizer.normalize_with_offsets_map(["Ça\\u00a0Va"])
    >>> text.numpy()[0].decode()
    'ca Va'
    >>> starts, ends = normalizer.find_source_offsets(
    ...     offsets_map, tf.ragged.constant([[0, 3]], tf.int64),
    ...     tf.ragged.constant([[2, 5]], tf.int64))
    >>> starts.to_list(), ends.to_list()
    ([[0, 5]], [[3, 7]])
    """

    def __init__(self, lower_case: bool, name: str | None = None):
        super().__init__(name=name)
        self.lower_case = lower_case
        keys, replacements = unicode_tables.normalization_table(lower_case)
        self._keys, self._replacements = tf.constant(keys), tf.constant(replacements)
        if lower_case:
            cased, ignorable = unicode_tables.final_sigma_ranges()
            self._cased = ranges_tensors(cased)
            self._case_ignorable = ranges_tensors(ignorable)

    def normalize(self, texts) -> tf.Tensor:
        """Normalizes UTF-8 strings.

        Args:
            texts: UTF-8 strings `[batch]`.

        Returns:
            The normalized strings `[batch]`.
        """
        codepoints = self.normalize_to_codepoints(texts)
        return _encode(codepoints.flat_values, codepoints.row_splits)

    def normalize_to_codepoints(self, texts) -> tf.RaggedTensor:
        """Normalizes UTF-8 strings into code points.

        Args:
            texts: UTF-8 strings `[batch]`.

        Returns:
            The normalized code points, int32 ragged `[batch, (code points)]`.
        """
        chars = tf.strings.unicode_decode(texts, "UTF-8", errors="replace")
        values, lengths = self._replace(chars)
        return tf.RaggedTensor.from_row_splits(
            values, tf.gather(_exclusive_cumsum(lengths), chars.row_splits), validate=False
        )

    def normalize_with_offsets_map(self, texts):
        """Normalizes UTF-8 strings, and maps the result's offsets back to them.

        Args:
            texts: UTF-8 strings `[batch]`.

        Returns:
            `(normalized, offsets_map)`: the normalized strings `[batch]`, and the map
            `find_source_offsets` takes.
        """
        # n input characters over the batch, flat; m normalized code points.
        # [batch, (chars)]
        chars, starts = tf.strings.unicode_decode_with_offsets(texts, "UTF-8", errors="replace")
        # [m], [n]: what each input character became, and how many
        values, lengths = self._replace(chars)
        # [n + 1]: each input character's first code point in values
        value_splits = _exclusive_cumsum(lengths)
        # [batch + 1]: each string's, in values
        row_splits = tf.gather(value_splits, chars.row_splits)
        normalized = _encode(values, row_splits)  # [batch]
        # [m + 1]: each code point's byte in the output
        byte_splits = _exclusive_cumsum(_utf8_length(values))
        row_ids = chars.value_rowids()  # [n]
        size = tf.size(chars.flat_values, tf.int64)  # n
        # [n]: position in its string
        char_starts = tf.range(size) - tf.gather(chars.row_splits, row_ids)
        # following [n]: the next input character that is not removed, if its string has one
        # (it ends this character's source span).
        is_kept = tf.cast(lengths > 0, tf.int64)  # [n]
        kept = tf.concat([tf.where(lengths > 0)[:, 0], [size]], 0)  # [kept + 1]; `size`: none
        following = tf.gather(kept, tf.cumsum(is_kept, exclusive=True) + is_kept)
        has_following = following < tf.gather(chars.row_splits, row_ids + 1)
        following = tf.minimum(following, size - 1)
        offsets_map = _OffsetsMap(
            target_starts=tf.gather(byte_splits, value_splits[:-1]),
            target_row_starts=tf.gather(byte_splits, row_splits[:-1]),
            byte_starts=starts.flat_values,
            byte_ends=tf.where(
                has_following,
                tf.gather(starts.flat_values, following),
                tf.gather(tf.cast(tf.strings.length(texts), tf.int64), row_ids),
            ),
            char_starts=char_starts,
            char_ends=tf.where(
                has_following,
                tf.gather(char_starts, following),
                tf.gather(chars.row_lengths(), row_ids),
            ),
        )
        return normalized, offsets_map

    def _replace(self, chars: tf.RaggedTensor):
        """Code points `[batch, (chars)]` -> (the normalized code points, flat; how many each
        input character became `[chars]`)."""
        flat = chars.flat_values
        if self.lower_case:
            flat = tf.cond(
                tf.reduce_any(flat == unicode_tables.CAPITAL_SIGMA),
                lambda: self._final_sigmas(flat, chars.value_rowids(), chars.row_splits),
                lambda: flat,
            )
        index = tf.minimum(tf.searchsorted(self._keys, flat), tf.size(self._keys) - 1)
        changed = tf.gather(self._keys, index) == flat
        return tf.cond(
            tf.reduce_any(changed),
            lambda: self._replace_changed(flat, index, changed),
            lambda: (flat, tf.ones_like(flat, tf.int64)),
        )

    def _replace_changed(self, flat, index, changed):
        """`_replace` where some characters change: `flat` code points `[n]`, their `index` in
        the table's keys and whether they are there."""
        width = self._replacements.shape[1]
        replaced = tf.where(
            changed[:, None],
            tf.gather(self._replacements, index),
            tf.pad(flat[:, None], [[0, 0], [0, width - 1]], constant_values=-1),
        )
        values = tf.boolean_mask(replaced, replaced >= 0)  # [input characters, width] -> flat
        lengths = tf.reduce_sum(tf.cast(replaced >= 0, tf.int64), axis=1)
        return values, lengths

    @staticmethod
    def find_source_offsets(offsets_map, starts, ends, unit: str = "BYTE"):
        """Normalized byte offsets -> input offsets, for `[batch, (n)]` ragged spans.

        A span starts where the input character of its first byte starts, and
        ends where the next input character that normalization kept starts (or at
        the end of the input).

        Args:
            offsets_map: `normalize_with_offsets_map`'s map of the texts.
            starts: the spans' first bytes in the normalized texts, int64 ragged `[batch, (n)]`.
            ends: the spans' ends (exclusive) in the normalized texts, likewise.
            unit: "BYTE" (UTF-8 byte offsets) or "UTF8_CHAR" (code point offsets, as `str` indexes).

        Returns:
            `(starts, ends)`, the spans' offsets in the input texts, in `unit`.
        """
        shift = tf.gather(offsets_map.target_row_starts, starts.value_rowids())
        first = (
            tf.searchsorted(
                offsets_map.target_starts,
                starts.flat_values + shift,
                side="right",
                out_type=tf.int64,
            )
            - 1
        )
        last = (
            tf.searchsorted(
                offsets_map.target_starts,
                ends.flat_values + shift - 1,
                side="right",
                out_type=tf.int64,
            )
            - 1
        )
        if unit == "BYTE":
            source_starts, source_ends = offsets_map.byte_starts, offsets_map.byte_ends
        elif unit == "UTF8_CHAR":
            source_starts, source_ends = offsets_map.char_starts, offsets_map.char_ends
        else:
            raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
        return (
            starts.with_flat_values(tf.gather(source_starts, first)),
            ends.with_flat_values(tf.gather(source_ends, last)),
        )

    def _final_sigmas(self, chars, row_ids, row_splits):
        """U+03A3 -> U+03C2 (ς) where Python's `str.lower` makes it final.

        That is: the nearest character before it that is not case-ignorable is
        cased, and the nearest one after it (in the same string) is not.
        """
        ignorable = in_ranges(chars, self._case_ignorable)
        cased = in_ranges(chars, self._cased)
        kept = tf.where(~ignorable)[:, 0]  # positions of the characters not skipped
        rank = tf.cumsum(tf.cast(~ignorable, tf.int64)) - 1  # a kept position's index in `kept`
        sigmas = tf.where(chars == unicode_tables.CAPITAL_SIGMA)[:, 0]
        rank = tf.gather(rank, sigmas)
        row = tf.gather(row_ids, sigmas)
        before = tf.gather(kept, tf.maximum(rank - 1, 0))
        after = tf.gather(kept, tf.minimum(rank + 1, tf.size(kept, tf.int64) - 1))
        cased_before = (
            (rank > 0) & (before >= tf.gather(row_splits, row)) & tf.gather(cased, before)
        )
        cased_after = (
            (rank + 1 < tf.size(kept, tf.int64))
            & (after < tf.gather(row_splits, row + 1))
            & tf.gather(cased, after)
        )
        final = cased_before & ~cased_after
        return tf.tensor_scatter_nd_update(
            chars,
            sigmas[:, None],
            tf.where(final, unicode_tables.FINAL_SIGMA, unicode_tables.CAPITAL_SIGMA),
        )
