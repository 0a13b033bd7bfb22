"""In-graph packing of token segments into the encoder's inputs, to a fixed or to the batch's length."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization.vocab import Vocab


def pack_segments(segments, seq_length, vocab: Vocab, pad_to_seq_length: bool = True) -> dict[str, tf.Tensor]:
    """Ragged id segments `[batch, (tokens)]` -> int32 `input_word_ids`, `input_mask`, `input_type_ids`.

    Builds `[CLS] A [SEP] (B [SEP])`, trimming the segments round robin so that at most
    `seq_length` tokens remain (`seq_length` may be a scalar tensor). With
    `pad_to_seq_length` the outputs are `[batch, seq_length]`; without, they are padded
    only to the longest packed row of the batch, `[batch, <= seq_length]`.

    Example:
    >>> pack_segments([tokenizer.tokenize(["hi"])], 8, tokenizer.vocab, False)  # doctest: +SKIP
    {'input_word_ids': <[[101, 7632, 102]]>, ...}
    """
    seq_length = tf.cast(seq_length, tf.int32)
    segments = tf_text.RoundRobinTrimmer(seq_length - len(segments) - 1).trim(segments)
    ids, type_ids = tf_text.combine_segments(segments, vocab.cls_id, vocab.sep_id)  # [batch, (seq)]
    if pad_to_seq_length:
        word_ids, mask = tf_text.pad_model_inputs(ids, seq_length, pad_value=vocab.pad_id)
        type_ids, _ = tf_text.pad_model_inputs(type_ids, seq_length)
    else:
        word_ids = ids.to_tensor(default_value=vocab.pad_id)
        mask = tf.ones_like(ids).to_tensor()
        type_ids = type_ids.to_tensor()
    return {"input_word_ids": tf.cast(word_ids, tf.int32), "input_mask": tf.cast(mask, tf.int32),
            "input_type_ids": tf.cast(type_ids, tf.int32)}
