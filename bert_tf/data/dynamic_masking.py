"""Pretraining batches built on the fly from raw text, with fresh masks every epoch (RoBERTa's dynamic masking).

The stream yields the dict that `pretraining_features.parse_examples` yields
for TFRecords, with static shapes: int32 `[batch, max_seq_length]` ids, mask
and segments, `[batch, max_predictions_per_seq]` predictions (float32 weights)
and `next_sentence_labels` `[batch]`. Pairs: within a block of lines, the
sentences of each document are grouped into segments of about half the
sequence; A is a segment, B the next segment of the same document (label 0)
or, half of the time and whenever A ends its document, a segment drawn from a
second, shuffled pass over the corpus (label 1). The pair is trimmed round
robin to `max_seq_length - 3` and masked with tensorflow-text's
`mask_language_model` (15% of the selectable tokens, capped; 80/10/10).
Masks come from stateful random ops, so each pass over the data draws new
ones; `seed` fixes the file order, the pairing and the shuffles.
"""

from __future__ import annotations

from typing import Sequence

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.data import corpus, pretraining_features
from bert_tf.tokenization import BertTokenizer

_BLOCK_LINES = 512  # lines tokenized and paired at a time


def _first_of_runs(keys: tf.Tensor) -> tf.Tensor:
    """int64 `[n, k]` -> bool `[n]`: whether each row differs from the row before (the first does)."""
    previous = tf.concat([tf.fill([1, tf.shape(keys)[1]], tf.constant(-1, keys.dtype)), keys], 0)[:-1]
    return tf.reduce_any(keys != previous, axis=1)


def _segments(lines: tf.Tensor, tokenizer: BertTokenizer, segment_tokens: int):
    """A block of lines `[n]` -> (segments ragged `[m, (tokens)]`, document index of each `[m]`).

    A block without tokens (blank or control-character lines) gives `m = 0`.
    """
    lines = tf.strings.strip(lines)
    document = tf.cumsum(tf.cast(tf.equal(lines, ""), tf.int64))  # blank lines end documents
    sentences = tokenizer.tokenize(lines)
    keep = sentences.row_lengths() > 0
    sentences, document = tf.ragged.boolean_mask(sentences, keep), tf.boolean_mask(document, keep)
    lengths = sentences.row_lengths()
    # Tokens before each sentence, counted from the start of its document.
    before = tf.cumsum(lengths, exclusive=True)
    new_document = _first_of_runs(document[:, tf.newaxis])
    document_start = tf.gather(tf.boolean_mask(before, new_document),
                               tf.cumsum(tf.cast(new_document, tf.int64)) - 1)
    new_segment = _first_of_runs(tf.stack([document, (before - document_start) // segment_tokens], axis=1))
    segment_document = tf.boolean_mask(document, new_segment)
    segment_of_sentence = tf.cumsum(tf.cast(new_segment, tf.int64)) - 1
    segments = tf.RaggedTensor.from_value_rowids(
        sentences.flat_values, tf.repeat(segment_of_sentence, lengths), nrows=tf.size(segment_document, tf.int64))
    return segments, segment_document


def _segment_stream(files: Sequence[str], tokenizer, segment_tokens: int, seed, input_context,
                    endless: bool = True):
    """A sharded dataset of segments (int32 `[tokens]`) with their next one in the document.

    Endless, with the files reshuffled every pass; with `endless=False`, one pass in file order.
    """
    dataset = tf.data.Dataset.from_tensor_slices(list(files))
    shard_files = input_context is not None and len(files) >= input_context.num_input_pipelines
    if shard_files:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if endless:
        dataset = dataset.shuffle(len(files), seed=seed, reshuffle_each_iteration=True).repeat()
    blocks = dataset.flat_map(tf.data.TextLineDataset).batch(_BLOCK_LINES)
    if input_context is not None and not shard_files:
        blocks = blocks.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

    def pairs(lines):
        segments, document = _segments(lines, tokenizer, segment_tokens)
        count = tf.size(document)  # [:count] keeps a block without segments empty
        has_next = tf.concat([document[1:] == document[:-1], [False]], 0)[:count]
        following = tf.concat([segments[1:], tf.ragged.constant([[]], tf.int32)], 0)[:count]
        return segments, following, has_next

    return blocks.map(pairs).unbatch()


def _require_segments(files: Sequence[str], tokenizer, segment_tokens: int, input_context) -> None:
    """Raises `CorpusError` if this pipeline's share of `files` holds no token: the endless
    stream would then search it forever. Reads up to the first segment, so normally one block."""
    probe = _segment_stream(files, tokenizer, segment_tokens, None, input_context, endless=False)
    if next(iter(probe.take(1)), None) is not None:
        return
    share = "the corpus" if input_context is None else (
        f"input pipeline {input_context.input_pipeline_id} of {input_context.num_input_pipelines}'s "
        f"share of the corpus (whole files when there are enough, else one block of {_BLOCK_LINES} "
        f"lines in {input_context.num_input_pipelines})")
    raise corpus.CorpusError(f"no text that tokenizes to any token in {share}: {len(files)} files, "
                             f"the first {files[0]}")


def dynamic_masking_dataset(files: Sequence[str], vocab_file: str, do_lower_case: bool = True,
                            batch_size: int = 32, max_seq_length: int = 128,
                            max_predictions_per_seq: int = 20, masked_lm_prob: float = 0.15,
                            seed: int | None = None, input_context: tf.distribute.InputContext | None = None,
                            shuffle_buffer_size: int = 10_000) -> tf.data.Dataset:
    """An endless stream of masked-LM + NSP batches from raw corpus text (see the module docstring).

    Args:
      files: the corpus files (`corpus.expand_input_files` expands a flag's globs).
        Check them first with `corpus.check_corpus`: here, lines that are not
        UTF-8 are read with replacement characters.
      batch_size: the global batch size; with `input_context`, each pipeline
        yields its per-replica share and reads its own shard of the input.

    Raises:
      corpus.CorpusError: this pipeline's share of the corpus yields no token
        (the stream would never yield).
    """
    if isinstance(files, str):
        raise TypeError(f"files: a list of corpus files, not the string {files!r}")
    tokenizer = BertTokenizer(vocab_file, do_lower_case)
    vocab = tokenizer.vocab
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    segment_tokens = max(1, (max_seq_length - 3) // 2)
    _require_segments(files, tokenizer, segment_tokens, input_context)
    seeds = [None, None, None] if seed is None else [seed, seed + 1, seed + 2]
    pairs = _segment_stream(files, tokenizer, segment_tokens, seeds[0], input_context)
    random_segments = _segment_stream(files, tokenizer, segment_tokens, seeds[1], input_context).map(
        lambda segment, following, has_next: segment).shuffle(shuffle_buffer_size, seed=seeds[1])
    coins = tf.data.Dataset.random(seed=seeds[2], rerandomize_each_iteration=True)

    def choose_b(pair, random_segment, coin):
        segment, following, has_next = pair
        is_random = tf.logical_or(tf.logical_not(has_next), coin % 2 == 0)
        return segment, tf.cond(is_random, lambda: random_segment, lambda: following), tf.cast(is_random, tf.int32)

    dataset = tf.data.Dataset.zip((pairs, random_segments, coins)).map(choose_b)
    dataset = dataset.shuffle(shuffle_buffer_size, seed=seeds[0]).ragged_batch(batch_size, drop_remainder=True)

    trimmer = tf_text.RoundRobinTrimmer(max_seq_length - 3)
    selector = tf_text.RandomItemSelector(max_selections_per_batch=max_predictions_per_seq,
                                          selection_rate=masked_lm_prob,
                                          unselectable_ids=[vocab.cls_id, vocab.sep_id, vocab.pad_id])
    chooser = tf_text.MaskValuesChooser(len(vocab), vocab.mask_id, mask_token_rate=0.8, random_token_rate=0.1)

    lengths = pretraining_features.feature_lengths(max_seq_length, max_predictions_per_seq)

    def mask_and_pack(a, b, labels):
        ids, segment_ids = tf_text.combine_segments(trimmer.trim([a, b]), vocab.cls_id, vocab.sep_id)
        masked, positions, masked_ids = tf_text.mask_language_model(ids, selector, chooser)
        input_ids, input_mask = tf_text.pad_model_inputs(masked, max_seq_length, pad_value=vocab.pad_id)
        segment_ids, _ = tf_text.pad_model_inputs(segment_ids, max_seq_length)
        positions, weights = tf_text.pad_model_inputs(positions, max_predictions_per_seq)
        masked_ids, _ = tf_text.pad_model_inputs(masked_ids, max_predictions_per_seq)
        features = {
            "input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids,
            "masked_lm_positions": positions, "masked_lm_ids": masked_ids,
            "masked_lm_weights": weights, "next_sentence_labels": labels,
        }
        features = pretraining_features.to_model_dtypes(features)
        return {name: tf.ensure_shape(features[name], [batch_size] if name == "next_sentence_labels"
                                      else [batch_size, length])
                for name, length in lengths.items()}

    return dataset.map(mask_and_pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
