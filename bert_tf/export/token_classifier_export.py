"""`TokenClassifierExport`: a `BertTokenClassifier` SavedModel, on ids and text, labels per word."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.export.task_module import TaskExport, label_names, text_spec
from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.bert_normalizer import in_ranges, ranges_tensors


class TokenClassifierExport(TaskExport):
    """Signatures:
        `serving_default`: ids -> `logits` `[batch, seq, classes]`, `predictions` (argmax, int32).
        `text`: `text` `[batch]` -> per word (whitespace-separated, as a CoNLL file's words, which
            `run_ner.py` trains on, and each CJK character a word of its own, as in Chinese files of
            one character a line; so Chinese text needs no spaces):
            `tokens` (the word cut from the input), `labels` (its first piece's label),
            `start_char`, `end_char` (code point offsets, `text[start:end]`), all
            `[batch, max_words]`, padded with "" and -1. Only words whose pieces all fit in
            `seq_length` tokens are reported: a word cut there, and the words after it, are dropped.
            Words are split as BERT's tokenizer sees whitespace: a word of characters it drops
            (a zero-width space, control characters) has no pieces and is not reported, and the
            control characters `str.split` splits on (U+000B, U+000C,
            U+001C-U+001F, U+0085) join words. Align results with the input
            by `start_char`, not by word index, where such text occurs.

    Example:
    >>> from bert_tf.export import export_task_model
    >>> from bert_tf.models import BertEncoder, BertTokenClassifier
    >>> from bert_tf.tokenization import BertTokenizer
    >>> encoder = BertEncoder.from_config_file("bert_config.json")
    >>> tagger = BertTokenClassifier(encoder, num_classes=3)
    >>> path = export_task_model(tagger, "export/ner", tokenizer=BertTokenizer("vocab.txt"),
    ...                          seq_length=16, labels=["O", "B-PER", "B-LOC"])
    >>> text = tf.constant(["John lives in Paris"])
    >>> out = tf.saved_model.load(path).signatures["text"](text=text)
    >>> out["tokens"].numpy(), out["start_char"].numpy()
    (array([[b'John', b'lives', b'in', b'Paris']], dtype=object), array([[ 0,  5, 11, 14]]))
    >>> out["labels"].shape  # one of the labels per word
    TensorShape([1, 4])
    """

    texts_packed = 1

    def __init__(self, model, tokenizer, seq_length: int, labels=None):
        super().__init__(model, tokenizer, seq_length)
        self.labels = label_names(labels, model.num_classes, "tagger")
        self._cjk = ranges_tensors(unicode_tables.CJK_RANGES)

    def serve(self, inputs):
        logits = self._logits(inputs)["logits"]  # [batch, seq, classes]
        return {"logits": logits, "predictions": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def tag_text(self, text):
        ids, starts, ends = self._tokenizer.tokenize_with_offsets(text, unit="UTF8_CHAR")
        keep = self.seq_length - 2  # tokens the model sees
        # One token more, which packing drops: it tells whether the window's last word is cut.
        # [batch, (tokens)]
        ids, starts, ends = ids[:, : keep + 1], starts[:, : keep + 1], ends[:, : keep + 1]
        predictions = self._shared.serve(self._pack([ids]))["predictions"]  # [batch, seq]

        position = tf.ragged.range(ids.row_lengths()).flat_values  # each token's index in its row
        # A word starts where whitespace lies before the token (the offsets of the characters
        # the tokenizer drops are its tokens', so a gap between two tokens is whitespace).
        previous_end = tf.concat([[-1], ends.flat_values[:-1]], axis=0)
        # A CJK character is a word, as is what follows it.
        chars = tf.strings.unicode_decode(text, "UTF-8", errors="replace")  # [batch, (chars)]
        row = ids.value_rowids()
        first_char = tf.gather(
            chars.flat_values, tf.gather(chars.row_splits, row) + starts.flat_values
        )
        is_cjk = in_ranges(first_char, self._cjk)  # [tokens]
        is_word_start = (
            (position == 0)
            | (starts.flat_values > previous_end)
            | is_cjk
            | tf.concat([[False], is_cjk[:-1]], axis=0)
        )
        word = tf.cumsum(tf.cast(is_word_start, tf.int64)) - 1  # global word index of each token
        num_words = tf.reduce_sum(tf.cast(is_word_start, tf.int64))
        # A word is reported only if all its pieces fit: a piece at `keep` means it is cut.
        fits = tf.math.unsorted_segment_max(position, word, num_words) < keep  # [words]
        # each reported word's first token
        first = tf.where(is_word_start & tf.gather(fits, word))[:, 0]
        word_row = tf.gather(row, first)
        start_char = tf.gather(starts.flat_values, first)
        word_ends = tf.math.unsorted_segment_max(ends.flat_values, word, num_words)  # [words]
        end_char = tf.gather(word_ends, tf.gather(word, first))
        # +1: position 0 of the packed sequence is [CLS].
        label_ids = tf.gather_nd(
            predictions, tf.stack([word_row, tf.gather(position, first) + 1], axis=1)
        )
        words = tf.strings.substr(
            tf.gather(text, word_row),
            tf.cast(start_char, tf.int32),
            tf.cast(end_char - start_char, tf.int32),
            unit="UTF8_CHAR",
        )

        def per_row(values, pad):  # [words] -> [batch, max_words]
            return tf.RaggedTensor.from_value_rowids(
                values, word_row, nrows=tf.shape(text, tf.int64)[0]
            ).to_tensor(default_value=pad)

        return {
            "tokens": per_row(words, ""),
            "labels": per_row(tf.gather(self.labels, label_ids), ""),
            "start_char": per_row(start_char, tf.constant(-1, tf.int64)),
            "end_char": per_row(end_char, tf.constant(-1, tf.int64)),
        }

    def text_signatures(self) -> dict:
        return {"text": (self.tag_text, [text_spec("text")])}
