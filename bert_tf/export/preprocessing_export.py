"""`PreprocessingExport`: a TF-Hub-style BERT preprocessing SavedModel: text -> encoder inputs."""

from __future__ import annotations

import itertools

import tensorflow as tf

from bert_tf.export.task_module import text_spec
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

_TEXTS = text_spec("text")


class _Tokenize(tf.Module):
    """`tokenize(texts [batch])` -> int32 ragged `[batch, (words), (pieces)]`, as TF Hub's;
    carries the vocab asset."""

    def __init__(self, tokenizer: BertTokenizer):
        super().__init__()
        self._tokenizer = tokenizer
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)
        self.do_lower_case = tf.Variable(
            tokenizer.do_lower_case, trainable=False, name="do_lower_case"
        )
        vocab = tokenizer.vocab
        self._special = {
            "vocab_size": len(vocab),
            "padding_id": vocab.pad_id,
            "start_of_sequence_id": vocab.cls_id,
            "end_of_segment_id": vocab.sep_id,
            "mask_id": vocab.mask_id,
        }

    @tf.function(autograph=False, input_signature=[_TEXTS])
    def __call__(self, texts):
        return self._tokenizer.tokenize_words(texts)

    @tf.function(autograph=False, input_signature=[])
    def get_special_tokens_dict(self):
        """The ids a caller needs to build inputs by hand, as TF Hub's preprocessors give them."""
        return {name: tf.constant(value, tf.int32) for name, value in self._special.items()}


class _PackInputs(tf.Module):
    """`bert_pack_inputs([segment_a, (segment_b)], seq_length)` -> the encoder's int32 inputs;
    a segment is ragged `[batch, (words), (pieces)]` or `[batch, (tokens)]`."""

    def __init__(self, tokenizer: BertTokenizer, seq_length: int):
        super().__init__()
        self._tokenizer = tokenizer
        self.seq_length = seq_length

    @tf.function(autograph=False)
    def __call__(self, segments, seq_length=None):
        if seq_length is None:
            seq_length = self.seq_length
        return self._tokenizer.pack_inputs(list(segments), seq_length)


class PreprocessingExport(tf.Module):
    """Strings -> `input_word_ids`/`input_mask`/`input_type_ids` `[batch, seq_length]`, as TF Hub's.

    Subobjects: `tokenize` (strings -> ragged ids `[batch, (words), (pieces)]`;
    `tokenize.vocab_file` is the vocab asset) and `bert_pack_inputs` (one or two
    segments, each ragged `[batch, (words), (pieces)]` or `[batch, (tokens)]`, and an
    optional int32 scalar `seq_length`, default the exported one).

    Example:
    >>> tokenizer = BertTokenizer("vocab.txt")
    >>> tf.saved_model.save(PreprocessingExport(tokenizer, seq_length=16), "export/preprocessing")
    >>> pre = tf.saved_model.load("export/preprocessing")
    >>> pre(tf.constant(["hello world"]))["input_word_ids"].shape
    TensorShape([1, 16])
    >>> a, b = pre.tokenize(tf.constant(["a question"])), pre.tokenize(tf.constant(["its answer"]))
    >>> pre.bert_pack_inputs([a, b], tf.constant(8))["input_type_ids"].numpy().tolist()
    [[0, 0, 0, 0, 1, 1, 1, 0]]
    """

    def __init__(self, tokenizer: BertTokenizer, seq_length: int = 128):
        super().__init__()
        self._tokenizer = tokenizer
        self.tokenize = _Tokenize(tokenizer)
        self.bert_pack_inputs = _PackInputs(tokenizer, seq_length)
        splits = tokenizer.tokenize([""]).row_splits.dtype
        segment_specs = [
            tf.RaggedTensorSpec(
                [None] * (rank + 1), tf.int32, ragged_rank=rank, row_splits_dtype=splits
            )
            for rank in (1, 2)
        ]
        for count in (1, 2):
            for segments in itertools.product(segment_specs, repeat=count):
                self.bert_pack_inputs.__call__.get_concrete_function(list(segments))
                self.bert_pack_inputs.__call__.get_concrete_function(
                    list(segments), tf.TensorSpec([], tf.int32, name="seq_length")
                )

    @tf.function(autograph=False, input_signature=[_TEXTS])
    def __call__(self, texts):
        # the fast path: no words needed
        return self.bert_pack_inputs([self._tokenizer.tokenize(texts)])
