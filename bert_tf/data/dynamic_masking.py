"""Pretraining batches made on the fly from raw text, masked afresh each epoch (RoBERTa's way).

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
Each batch draws its masks from a stateless seed of its own, the next of an
endless random stream, so each batch and each pass over the data gets new
masks. `seed` fixes that stream as well as the file order, the pairing and the
shuffles: the same seed gives the same batches, masks included, in any process
with the same TF global seed (`tf.random.set_seed`, which tf.data's seeded ops combine
with theirs; run_pretraining.py sets it from `--random_seed`). With `seed=None` every
run draws new ones.

With whole-word masking, the lines are grouped into words as they are read
(`word_segmentation.WordGrouper`: `##` pieces, and a segmenter's Chinese
words), and each batch is masked by `masked_lm.mask_tokens`, create_pretraining_data's
rule: whole words in random order while they fit in the sequence's budget, one
80/10/10 draw per word.

With `next_sentence_prediction=False`, the text is one stream of tokens, a `[SEP]` where a
blank line or the end of a file ends a document (RoBERTa's FULL-SENTENCES), cut into windows
that fill `[CLS] window [SEP]` exactly; segment ids are all 0 and there is no
`next_sentence_labels`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.data import corpus, masked_lm, pretraining_dataset, pretraining_features
from bert_tf.data.word_segmentation import WordGrouper
from bert_tf.tokenization import BertTokenizer, unicode_tables

_BLOCK_LINES = 512  # lines tokenized and paired at a time
_WHOLE_WORD_FEATURES = ("input_ids", "masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def _first_of_runs(keys: tf.Tensor) -> tf.Tensor:
    """int64 `[n, k]` -> bool `[n]`: whether each row differs from the previous (the first does)."""
    previous = tf.concat([tf.fill([1, tf.shape(keys)[1]], tf.constant(-1, keys.dtype)), keys], 0)[
        :-1
    ]
    return tf.reduce_any(keys != previous, axis=1)


def _mark_continuations(
    lines: tf.Tensor, sentences: tf.RaggedTensor, words: WordGrouper
) -> tf.RaggedTensor:
    """Token ids `[n, (tokens)]` of `lines` `[n]` with each token that continues its word stored as
    `-1 - id`: the word boundaries then travel with the ids through pairing and trimming."""

    def continues(lines, ids):  # in Python, as the segmenter is
        return words.continues([line.decode("utf-8", "replace") for line in lines], ids)

    ids = sentences.flat_values  # [tokens]
    continuation = tf.ensure_shape(
        tf.numpy_function(continues, [lines, ids], tf.bool, stateful=False), ids.shape
    )
    return sentences.with_flat_values(tf.where(continuation, -1 - ids, ids))


def _split_continuations(ids: tf.RaggedTensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
    """Undoes `_mark_continuations`: (ids, whether each continues a word), `[batch, (tokens)]`."""
    continuation = ids < 0
    return tf.where(continuation, -1 - ids, ids), continuation


def _segments(
    lines: tf.Tensor,
    tokenizer: BertTokenizer,
    segment_tokens: int,
    words: WordGrouper | None = None,
):
    """A block of lines `[n]` -> (segments ragged `[m, (tokens)]`, document index of each `[m]`).

    A block without tokens (blank or control-character lines) gives `m = 0`. With `words`,
    continuations are marked (`_mark_continuations`).
    """
    # Blank lines end documents: blank to Python's `str.strip`, as in create_pretraining_data.
    blank = tf.strings.regex_full_match(
        lines, unicode_tables.regex_class(unicode_tables.whitespace_ranges()) + "*"
    )
    document = tf.cumsum(tf.cast(blank, tf.int64))
    sentences = tokenizer.tokenize(lines)
    if words is not None:
        sentences = _mark_continuations(lines, sentences, words)
    keep = sentences.row_lengths() > 0
    sentences, document = tf.ragged.boolean_mask(sentences, keep), tf.boolean_mask(document, keep)
    lengths = sentences.row_lengths()
    # Tokens before each sentence, counted from the start of its document.
    before = tf.cumsum(lengths, exclusive=True)
    new_document = _first_of_runs(document[:, tf.newaxis])
    document_start = tf.gather(
        tf.boolean_mask(before, new_document), tf.cumsum(tf.cast(new_document, tf.int64)) - 1
    )
    new_segment = _first_of_runs(
        tf.stack([document, (before - document_start) // segment_tokens], axis=1)
    )
    segment_document = tf.boolean_mask(document, new_segment)
    segment_of_sentence = tf.cumsum(tf.cast(new_segment, tf.int64)) - 1
    segments = tf.RaggedTensor.from_value_rowids(
        sentences.flat_values,
        tf.repeat(segment_of_sentence, lengths),
        nrows=tf.size(segment_document, tf.int64),
    )
    return segments, segment_document


def _pairs_function(
    tokenizer: BertTokenizer, segment_tokens: int, words: WordGrouper | None
) -> tf.types.experimental.GenericFunction:
    """A block of lines `[n]` -> (segments ragged `[m, (tokens)]`, the segment after each, whether
    that one follows it in its document `[m]`). A `tf.function` traced once: the corpus's streams
    share its graph, whose tokenizer takes a second to build."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def pairs_of_block(lines):
        segments, document = _segments(lines, tokenizer, segment_tokens, words)
        count = tf.size(document)  # [:count] keeps a block without segments empty
        has_next = tf.concat([document[1:] == document[:-1], [False]], 0)[:count]
        following = tf.concat([segments[1:], tf.ragged.constant([[]], tf.int32)], 0)[:count]
        return segments, following, has_next

    return pairs_of_block


def _text_function(
    tokenizer: BertTokenizer, words: WordGrouper | None, sep_id: int
) -> tf.types.experimental.GenericFunction:
    """A block of lines `[n]` -> its tokens `[tokens]`, with `sep_id` for each blank line that ends
    a document (the first blank line of a run; one that starts the block may repeat a separator)."""
    blank_line = unicode_tables.regex_class(unicode_tables.whitespace_ranges()) + "*"

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def text_of_block(lines):
        blank = tf.strings.regex_full_match(lines, blank_line)
        separator = blank & ~tf.concat([[False], blank[:-1]], 0)  # [n]
        sentences = tokenizer.tokenize(lines)
        if words is not None:
            sentences = _mark_continuations(lines, sentences, words)
        separators = tf.ragged.boolean_mask(
            tf.fill([tf.size(lines), 1], sep_id), separator[:, None]
        )
        return tf.concat([sentences, tf.cast(separators, sentences.dtype)], axis=1).flat_values

    return text_of_block


def _segment_stream(
    files: Sequence[str],
    pairs_of_block,
    seed,
    input_context,
    endless: bool = True,
    file_ends_document: bool = False,
):
    """A sharded dataset of segments (int32 `[tokens]`) with their next one in the document, from
    `_pairs_function`'s `pairs_of_block` (or of tokens, from `_text_function`'s `text_of_block`).

    Endless, with the files reshuffled every pass; with `endless=False`, one pass in file order.
    With `file_ends_document`, a blank line is read after each file's last.
    """

    def lines_of(file_name):
        lines = tf.data.TextLineDataset(file_name)
        return lines.concatenate(tf.data.Dataset.from_tensors("")) if file_ends_document else lines

    def read_blocks(file_names: tf.data.Dataset) -> tf.data.Dataset:
        # a block does not span passes, so a short file's long line is not repeated in one
        if endless:
            file_names = file_names.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
        blocks = file_names.flat_map(lines_of).batch(_BLOCK_LINES).flat_map(_split_long_lines)
        return blocks.repeat() if endless else blocks

    return (
        pretraining_dataset.read_pipeline_share(files, read_blocks, input_context)
        .map(pairs_of_block)
        .unbatch()
    )


def _pairs(
    files: Sequence[str], pairs_of_block, seeds: list, input_context, shuffle_buffer_size: int
) -> tf.data.Dataset:
    """Shuffled (A, B, whether B is random) from `_pairs_function`'s `pairs_of_block`, drawing from
    `seeds[:3]` (the module docstring has the rule)."""
    _require_segments(files, pairs_of_block, input_context)
    pairs = _segment_stream(files, pairs_of_block, seeds[0], input_context)
    random_segments = (
        _segment_stream(files, pairs_of_block, seeds[1], input_context)
        .map(lambda segment, following, has_next: segment)
        .shuffle(shuffle_buffer_size, seed=seeds[1])
    )
    coins = tf.data.Dataset.random(seed=seeds[2], rerandomize_each_iteration=True)

    def choose_b(pair, random_segment, coin):
        segment, following, has_next = pair
        is_random = tf.logical_or(tf.logical_not(has_next), coin % 2 == 0)
        b = tf.cond(is_random, lambda: random_segment, lambda: following)
        return segment, b, tf.cast(is_random, tf.int32)

    dataset = tf.data.Dataset.zip((pairs, random_segments, coins)).map(choose_b)
    return dataset.shuffle(shuffle_buffer_size, seed=seeds[0])


def _split_long_lines(block: tf.Tensor) -> tf.data.Dataset:
    """A block of lines `[n]` -> blocks of at most `_BLOCK_LINES` lines, its lines longer than
    `corpus.MAX_LINE_BYTES` split (`corpus.split_long_lines`):
    one block, unless it has such lines."""
    lines = corpus.split_long_lines(block)
    return tf.data.Dataset.from_tensor_slices(
        tf.RaggedTensor.from_row_starts(lines, tf.range(0, tf.size(lines, tf.int64), _BLOCK_LINES))
    )


def _require_segments(
    files: Sequence[str], pairs_of_block, input_context, sep_id: int | None = None
) -> None:
    """Raises `CorpusError` if this pipeline's share of `files` holds no token: the endless
    stream would then search it forever. Reads up to the first segment, so normally one block.
    With `sep_id`, `pairs_of_block` is `_text_function`'s, and its separators are no token."""
    probe = _segment_stream(files, pairs_of_block, None, input_context, endless=False)
    if sep_id is not None:
        probe = probe.filter(lambda token: token != sep_id)
    if next(iter(probe.take(1)), None) is not None:
        return
    share = (
        "the corpus"
        if input_context is None
        else (
            f"input pipeline {input_context.input_pipeline_id} of "
            f"{input_context.num_input_pipelines}'s "
            "share of the corpus (whole files when there are enough, else one block of "
            f"{_BLOCK_LINES} lines in {input_context.num_input_pipelines})"
        )
    )
    raise corpus.CorpusError(
        f"no text that tokenizes to any token in {share}: {len(files)} files, the first {files[0]}"
    )


def _mask_seeds(seed: int | None, input_context) -> tf.data.Dataset:
    """An endless stream of stateless seeds (int64 `[2]`), one per batch, new each pass; each input
    pipeline gets its own."""
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    if input_context is None:
        return seeds
    return seeds.map(
        lambda pair: tf.random.experimental.stateless_fold_in(pair, input_context.input_pipeline_id)
    )


def _seeded_selector(
    ids: tf.RaggedTensor, seed: tf.Tensor, **selector_options
) -> tf_text.RandomItemSelector:
    """tf-text's `RandomItemSelector` for `ids` `[batch, (tokens)]` whose shuffle draws from `seed`.

    The selector shuffles each row's positions in `ids.flat_values`; sorting them by a
    random key per token keeps the rows independent however alike they are.
    """
    # [tokens in the batch]
    keys = tf.random.stateless_uniform(
        tf.shape(ids.flat_values), seed, minval=None, maxval=None, dtype=tf.int64
    )
    return tf_text.RandomItemSelector(
        **selector_options,
        shuffle_fn=lambda positions: tf.gather(positions, tf.argsort(tf.gather(keys, positions))),
    )


def _mask_whole_words(
    input_ids: tf.Tensor,
    input_mask: tf.Tensor,
    continuation: tf.Tensor,
    seed: tf.Tensor,
    config: masked_lm.MaskingConfig,
) -> dict[str, tf.Tensor]:
    """`masked_lm.mask_tokens` on a batch: `input_ids`, `input_mask`, `continuation` `[batch, seq]`
    -> the masked `input_ids` and the masked-LM features; the numpy generator draws from `seed`."""

    def mask(input_ids, input_mask, continuation, seed):
        features, _, _ = masked_lm.mask_tokens(
            input_ids,
            input_mask,
            config,
            np.random.default_rng(seed.astype(np.uint64)),
            continuation,
        )
        return tuple(features[name] for name in _WHOLE_WORD_FEATURES)

    values = tf.numpy_function(
        mask,
        [input_ids, input_mask, tf.cast(continuation, tf.bool), seed],
        [tf.int32, tf.int32, tf.int32, tf.float32],
        stateful=False,
    )
    return dict(zip(_WHOLE_WORD_FEATURES, values))


class _SeededMaskValuesChooser(tf_text.MaskValuesChooser):
    """tf-text's `MaskValuesChooser` (80% `[MASK]`, 10% random, 10% unchanged) drawing on `seed`."""

    def __init__(self, vocab_size: int, mask_token: int, seed: tf.Tensor):
        super().__init__(vocab_size, mask_token, mask_token_rate=0.8, random_token_rate=0.1)
        self._seed = seed

    def get_mask_values(self, masked_lm_ids: tf.RaggedTensor) -> tf.RaggedTensor:
        """`masked_lm_ids` `[batch, (predictions)]` -> the values put in their place."""
        ids = masked_lm_ids.flat_values  # [predictions in the batch]
        choice_seed, token_seed = tf.unstack(tf.random.experimental.stateless_split(self._seed))
        draw = tf.random.stateless_uniform(tf.shape(ids), choice_seed)
        random_ids = tf.random.stateless_uniform(
            tf.shape(ids), token_seed, maxval=self.vocab_size, dtype=ids.dtype
        )
        mask_rate = self._mask_token_rate
        values = tf.where(draw < mask_rate, tf.cast(self.mask_token, ids.dtype), ids)
        values = tf.where(
            (draw > mask_rate) & (draw < mask_rate + self.random_token_rate), random_ids, values
        )
        return masked_lm_ids.with_flat_values(values)


def dynamic_masking_dataset(
    files: Sequence[str],
    vocab_file: str,
    do_lower_case: bool = True,
    batch_size: int = 32,
    max_seq_length: int = 128,
    max_predictions_per_seq: int = 20,
    masked_lm_prob: float = 0.15,
    seed: int | None = None,
    input_context: tf.distribute.InputContext | None = None,
    shuffle_buffer_size: int = 10_000,
    do_whole_word_mask: bool = False,
    word_segmenter: str = "none",
    next_sentence_prediction: bool = True,
) -> tf.data.Dataset:
    """An endless stream of masked-LM + NSP batches from raw corpus text (see the module docstring).

    Args:
      files: the corpus files. Run `corpus.check_corpus` first: here, bytes that are not UTF-8
        become U+FFFD, a binary file is read on, and long lines are split.
      batch_size: the global batch size; with `input_context`, each pipeline yields its
        per-replica share and reads its own shard of the input.
      do_whole_word_mask: mask whole words (a token and its `##` pieces).
      word_segmenter: "jieba" or "rjieba" (with `do_whole_word_mask`): mask Chinese words whole.
      next_sentence_prediction: False: windows of packed text, without next-sentence labels.

    Raises:
      corpus.CorpusError: this pipeline's share of the corpus yields no token.
      word_segmentation.SegmenterError: `word_segmenter` is unknown or not installed.
      ValueError: a `word_segmenter` without `do_whole_word_mask`.
    """
    if isinstance(files, str):
        raise TypeError(f"files: a list of corpus files, not the string {files!r}")
    if word_segmenter != "none" and not do_whole_word_mask:
        raise ValueError(f"word_segmenter={word_segmenter!r} needs do_whole_word_mask")
    # as create_pretraining_data
    tokenizer = BertTokenizer(vocab_file, do_lower_case, split_special_tokens=True)
    vocab = tokenizer.vocab
    words = WordGrouper(vocab.tokens, do_lower_case, word_segmenter) if do_whole_word_mask else None
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    # Four streams; seeds s and s + 1 (a resumed run's) share none of them.
    seeds = [None] * 4 if seed is None else [4 * seed + stream for stream in range(4)]
    if next_sentence_prediction:
        pairs_of_block = _pairs_function(tokenizer, max(1, (max_seq_length - 3) // 2), words)
        dataset = _pairs(files, pairs_of_block, seeds, input_context, shuffle_buffer_size)
        dataset = dataset.ragged_batch(batch_size, drop_remainder=True)
    else:
        text_of_block = _text_function(tokenizer, words, vocab.sep_id)
        _require_segments(files, text_of_block, input_context, vocab.sep_id)
        dataset = _segment_stream(
            files, text_of_block, seeds[0], input_context, file_ends_document=True
        )
        dataset = dataset.batch(max_seq_length - 2, drop_remainder=True)  # [max_seq_length - 2]
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seeds[0])
        dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = tf.data.Dataset.zip((dataset, _mask_seeds(seeds[3], input_context)))

    trimmer = tf_text.RoundRobinTrimmer(max_seq_length - 3)
    selector_options = dict(
        max_selections_per_batch=max_predictions_per_seq,
        selection_rate=masked_lm_prob,
        unselectable_ids=[vocab.cls_id, vocab.sep_id, vocab.pad_id],
    )
    lengths = pretraining_features.feature_lengths(
        max_seq_length, max_predictions_per_seq, next_sentence_prediction
    )
    config = masked_lm.MaskingConfig(
        masked_lm_prob,
        max_predictions_per_seq,
        len(vocab),
        vocab.cls_id,
        vocab.sep_id,
        vocab.mask_id,
    )

    # graph ops only: autograph would convert tf-text's code
    @tf.autograph.experimental.do_not_convert
    def mask_and_pack(examples, seed):
        if next_sentence_prediction:
            a, b, labels = examples
            segments = trimmer.trim([a, b])
        else:  # [batch, max_seq_length - 2] windows
            segments, labels = [tf.RaggedTensor.from_tensor(examples)], None
        ids, segment_ids = tf_text.combine_segments(segments, vocab.cls_id, vocab.sep_id)
        segment_ids, _ = tf_text.pad_model_inputs(segment_ids, max_seq_length)
        if words is not None:
            ids, continuation = _split_continuations(ids)
            input_ids, input_mask = tf_text.pad_model_inputs(
                ids, max_seq_length, pad_value=vocab.pad_id
            )
            continuation, _ = tf_text.pad_model_inputs(
                tf.cast(continuation, tf.int32), max_seq_length
            )
            features = _mask_whole_words(input_ids, input_mask, continuation, seed, config)
            features.update(input_mask=input_mask, segment_ids=segment_ids)
        else:
            selection_seed, values_seed = tf.unstack(tf.random.experimental.stateless_split(seed))
            masked, positions, masked_ids = tf_text.mask_language_model(
                ids,
                _seeded_selector(ids, selection_seed, **selector_options),
                _SeededMaskValuesChooser(len(vocab), vocab.mask_id, values_seed),
            )
            input_ids, input_mask = tf_text.pad_model_inputs(
                masked, max_seq_length, pad_value=vocab.pad_id
            )
            positions, weights = tf_text.pad_model_inputs(positions, max_predictions_per_seq)
            masked_ids, _ = tf_text.pad_model_inputs(masked_ids, max_predictions_per_seq)
            features = {
                "input_ids": input_ids,
                "input_mask": input_mask,
                "segment_ids": segment_ids,
                "masked_lm_positions": positions,
                "masked_lm_ids": masked_ids,
                "masked_lm_weights": weights,
            }
        if next_sentence_prediction:
            features["next_sentence_labels"] = labels
        features = pretraining_features.to_model_dtypes(features)
        return {
            name: tf.ensure_shape(
                features[name],
                [batch_size] if name == "next_sentence_labels" else [batch_size, length],
            )
            for name, length in lengths.items()
        }

    return dataset.map(mask_and_pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(
        tf.data.AUTOTUNE
    )
