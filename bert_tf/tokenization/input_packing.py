"""`pack_segments`: `[CLS] A [SEP] (B [SEP])` rows from ragged token ids, in dense ops.

The same result as tensorflow-text's `RoundRobinTrimmer` + `combine_segments` +
`pad_model_inputs`, but every output position is gathered from the segments' flat values in
one pass: no ragged concatenation, so none of its validation ops (asserts and control flow),
which were most of a serving request's overhead.
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.errors import UserInputError


def pack_segments(
    segments, seq_length, cls_id: int, sep_id: int, pad_id: int, pad_to_seq_length: bool = True
) -> dict[str, tf.Tensor]:
    """One or two ragged id batches `[batch, (tokens)]` -> int32 `input_word_ids`,
    `input_mask`, `input_type_ids`, `[batch, width]`.

    Segments that do not fit in `seq_length` (an int, or a scalar tensor in a graph)
    are cut at their ends, round robin: the lengths tensorflow-text's
    `RoundRobinTrimmer` and google-research/bert's `_truncate_seq_pair` keep. `width`
    is `seq_length`, or, with `pad_to_seq_length=False`, the batch's longest packed row
    (`[CLS] [SEP]`, or `[CLS] [SEP] [SEP]`, for a batch of 0 rows).

    Example:
    >>> ids = pack_segments([tf.ragged.constant([[7, 8, 9]])], 4, cls_id=1, sep_id=2, pad_id=0)
    >>> ids["input_word_ids"].numpy().tolist()
    [[1, 7, 8, 2]]
    """
    if len(segments) not in (1, 2):
        raise ValueError(f"pack_segments packs one or two segments, got {len(segments)}")
    shortest = len(segments) + 2  # [CLS], a token, and a [SEP] each
    if isinstance(seq_length, int):
        if seq_length < shortest:
            raise UserInputError(
                f"seq_length={seq_length} leaves no room for a token besides "
                f"{shortest - 1} [CLS]/[SEP]"
            )
    else:  # a tensor, known only when the graph runs
        check = tf.debugging.assert_greater_equal(
            seq_length,
            shortest,
            message=f"seq_length leaves no room for a token besides {shortest - 1} [CLS]/[SEP]",
        )
        with tf.control_dependencies([check]):
            seq_length = tf.identity(seq_length)
    budget = seq_length - len(segments) - 1  # tokens left after [CLS] and the [SEP]s
    lengths = [tf.cast(segment.row_lengths(), tf.int32) for segment in segments]  # [batch] each
    if len(segments) == 1:
        kept = [tf.minimum(lengths[0], budget)]
    else:  # the first segment gets the odd token when both must be cut
        first = tf.minimum(lengths[0], tf.maximum(budget - lengths[1], (budget + 1) // 2))
        kept = [first, tf.minimum(lengths[1], budget - first)]
    total = sum(kept) + len(segments) + 1  # [batch] packed length
    # At least the [CLS] and [SEP]s: the max of a batch of 0 rows is INT_MIN.
    width = seq_length if pad_to_seq_length else tf.maximum(tf.reduce_max(total), len(segments) + 1)
    position = tf.range(width)[None, :]  # [1, width]
    real = position < total[:, None]  # [batch, width]
    word_ids = tf.where(real, sep_id, pad_id)  # every real position not filled below is a [SEP]
    type_ids = tf.zeros_like(word_ids)
    start = tf.ones_like(total)  # [batch] where the segment begins in the packed row
    for index, (segment, count) in enumerate(zip(segments, kept)):
        offset = position - start[:, None]  # [batch, width] position within the segment
        inside = (offset >= 0) & (offset < count[:, None])
        values = tf.concat([tf.cast(segment.flat_values, tf.int32), [pad_id]], 0)
        source = tf.where(
            inside, tf.cast(segment.row_starts(), tf.int32)[:, None] + offset, tf.size(values) - 1
        )
        word_ids = tf.where(inside, tf.gather(values, source), word_ids)
        if index:  # the second segment and its [SEP]
            type_ids = tf.where(real & (offset >= 0), 1, type_ids)
        start += count + 1
    return {
        "input_word_ids": tf.where(position == 0, cls_id, word_ids),
        "input_mask": tf.cast(real, tf.int32),
        "input_type_ids": type_ids,
    }
