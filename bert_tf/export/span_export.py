"""`SpanExport`: a `BertSpanLabeler` (SQuAD) as a SavedModel, on ids and on question + context."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.data.doc_stride import doc_stride_windows
from bert_tf.errors import UserInputError
from bert_tf.export.task_module import TaskExport, text_spec, with_batch_checked


def _offset_or_minus_one(offsets: tf.RaggedTensor, token, has_answer):
    """`offsets.flat_values[token]` where `has_answer`, else -1 (safe on a batch without tokens)."""
    values = tf.concat([offsets.flat_values, [-1]], 0)
    return tf.gather(values, tf.where(has_answer, token, tf.shape(values, tf.int64)[0] - 1))


class SpanExport(TaskExport):
    """Signatures:
        `serving_default`: ids -> `start_logits`, `end_logits` `[batch, seq]`.
        `text`: `question`, `context` `[batch]` -> `answer` (cut from the context), `score`
            (start + end logit), `start_char`, `end_char` (code point offsets:
            `context[start_char:end_char] == answer`).

    The text signature follows run_squad.py: the question is cut to `max_query_length`
    tokens, a long context is split into doc-stride windows, an answer starts in the
    window where its first token has the most context, and the best span has
    start <= end and at most `max_answer_length` tokens, among each window's top
    `n_best_size` start and end tokens, over all windows. Padding never takes one of those
    places, so an answer does not depend on the other rows of its request. No answer (with
    `version_2_with_negative`, when the `[CLS]` null score exceeds the best span's score by
    more than `null_score_diff_threshold`, as run_squad.py decides; or when no span fits,
    where run_squad.py's SQuAD 1.1 predictions say "empty") is `answer` "", offsets -1 and
    the null score. The threshold is stored in the export as the variable
    `null_score_diff_threshold`.

    Example:
    >>> from bert_tf.export import export_task_model
    >>> from bert_tf.models import BertEncoder, BertSpanLabeler
    >>> from bert_tf.tokenization import BertTokenizer
    >>> model = BertSpanLabeler(BertEncoder.from_config_file("bert_config.json"))
    >>> path = export_task_model(model, "export/squad", tokenizer=BertTokenizer("vocab.txt"),
    ...                          seq_length=16, max_query_length=8)
    >>> context = "It was written by Ann."
    >>> out = tf.saved_model.load(path).signatures["text"](
    ...     question=tf.constant(["Who wrote it?"]), context=tf.constant([context]))
    >>> answer = out["answer"][0].numpy().decode()
    >>> start, end = out["start_char"][0], out["end_char"][0]
    >>> answer == context[start:end]  # untrained: some span of the context
    True
    """

    def __init__(
        self,
        model,
        tokenizer,
        seq_length: int,
        max_answer_length: int = 30,
        doc_stride: int = 128,
        max_query_length: int = 64,
        version_2_with_negative: bool = False,
        null_score_diff_threshold: float = 0.0,
        n_best_size: int = 20,
    ):
        super().__init__(model, tokenizer, seq_length)
        if max_query_length + 4 > seq_length:
            raise UserInputError(
                f"`max_query_length`={max_query_length} leaves no room for the "
                f"context in `max_seq_length`={seq_length}"
            )
        if min(doc_stride, max_answer_length, n_best_size) < 1:
            raise UserInputError(
                f"`doc_stride`={doc_stride}, "
                f"`max_answer_length`={max_answer_length} and "
                f"`n_best_size`={n_best_size} must be positive"
            )
        self.max_answer_length = max_answer_length
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.version_2_with_negative = version_2_with_negative
        self.n_best_size = n_best_size
        self.null_score_diff_threshold = tf.Variable(
            float(null_score_diff_threshold), trainable=False, name="null_score_diff_threshold"
        )

    def serve(self, inputs):
        outputs = self._logits(inputs)
        return {"start_logits": outputs["start_logits"], "end_logits": outputs["end_logits"]}

    def answer_text(self, question, context):
        question = with_batch_checked(
            question, tf.shape(context)[0], "question and context must have the same batch size"
        )
        question_ids = self._shared.tokenize(question)[:, : self.max_query_length]
        context_ids, starts, ends = self._tokenizer.tokenize_with_offsets(context, unit="UTF8_CHAR")
        question_lengths = question_ids.row_lengths()
        windows = doc_stride_windows(
            context_ids.row_lengths(), self.seq_length - question_lengths - 3, self.doc_stride
        )
        doc = windows.doc_tokens.with_flat_values(
            tf.gather(context_ids.flat_values, windows.doc_tokens.flat_values)
        )
        inputs = self._pack([tf.gather(question_ids, windows.example), doc])
        logits = self._shared.serve(inputs)
        start_logits, end_logits = logits["start_logits"], logits["end_logits"]  # [windows, seq]
        is_token = inputs["input_mask"] > 0  # [windows, seq]

        # Each window's context tokens sit after [CLS] question [SEP].
        window = windows.doc_tokens.value_rowids()
        position = (
            tf.gather(tf.gather(question_lengths, windows.example), window)
            + 2
            + tf.ragged.range(windows.doc_tokens.row_lengths()).flat_values
        )
        at = tf.stack([window, position], axis=1)
        shape = tf.shape(start_logits, tf.int64)
        flat_token = tf.scatter_nd(at, windows.doc_tokens.flat_values, shape)  # [windows, seq]
        can_start = (
            tf.scatter_nd(at, tf.cast(windows.is_max_context.flat_values, tf.int32), shape) > 0
        ) & self._in_top_n(start_logits, is_token)
        can_end = (tf.scatter_nd(at, tf.ones_like(window, tf.int32), shape) > 0) & self._in_top_n(
            end_logits, is_token
        )
        # [seq(start), seq(end)]
        length = tf.range(shape[1])[None, :] - tf.range(shape[1])[:, None] + 1
        fits = (length >= 1) & (length <= self.max_answer_length)
        valid = can_start[:, :, None] & can_end[:, None, :] & fits[None]  # [windows, seq, seq]
        pair_scores = tf.where(
            valid, start_logits[:, :, None] + end_logits[:, None, :], -float("inf")
        )
        best_pair = tf.argmax(tf.reshape(pair_scores, [shape[0], -1]), axis=1)  # [windows]
        best_score = tf.reduce_max(pair_scores, axis=[1, 2])
        best_start = tf.gather(flat_token, best_pair // shape[1], batch_dims=1)
        best_end = tf.gather(flat_token, best_pair % shape[1], batch_dims=1)

        batch = tf.shape(context, tf.int64)[0]
        per_example = tf.RaggedTensor.from_value_rowids(best_score, windows.example, nrows=batch)
        # One -inf column more (argmax takes the first of equal scores, so never it): a batch of
        # 0 examples still has a window axis to reduce.
        window_scores = tf.pad(
            per_example.to_tensor(-float("inf")), [[0, 0], [0, 1]], constant_values=-float("inf")
        )
        chosen = tf.argmax(window_scores, axis=1) + per_example.row_starts()
        score = tf.gather(best_score, chosen)
        null_score = tf.math.unsorted_segment_min(
            start_logits[:, 0] + end_logits[:, 0], windows.example, batch
        )
        has_answer = score > -float("inf")
        # squad_metrics.postprocess: "" when null - best > threshold
        if self.version_2_with_negative:
            has_answer &= null_score - score <= self.null_score_diff_threshold
        start_char = _offset_or_minus_one(starts, tf.gather(best_start, chosen), has_answer)
        end_char = _offset_or_minus_one(ends, tf.gather(best_end, chosen), has_answer)
        answer = tf.strings.substr(
            context,
            tf.cast(tf.maximum(start_char, 0), tf.int32),
            tf.cast(end_char - start_char, tf.int32),
            unit="UTF8_CHAR",
        )
        return {
            "answer": answer,
            "score": tf.where(has_answer, score, null_score),
            "start_char": start_char,
            "end_char": end_char,
        }

    def _in_top_n(self, logits, is_token):
        """bool `[windows, seq]`: the `n_best_size` highest logits of each window's tokens (the
        lower index first among equals, as run_squad.py's stable sort).

        Padding is left out: a row is padded to the longest row of its request, so its padding
        would let the rest of the request change its answer."""
        columns = tf.shape(logits)[1]
        logits = tf.where(is_token, logits, -float("inf"))
        top = tf.math.top_k(logits, tf.minimum(self.n_best_size, columns)).indices  # [windows, n]
        return tf.reduce_max(tf.one_hot(top, columns), axis=1) > 0

    def text_signatures(self) -> dict:
        return {"text": (self.answer_text, [text_spec("question"), text_spec("context")])}
