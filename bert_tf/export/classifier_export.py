"""`ClassifierExport`: a `BertClassifier` as a SavedModel, on ids and on one or two texts."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.export.task_module import (
    TaskExport,
    checked_ids,
    label_names,
    text_spec,
    with_batch_checked,
)
from bert_tf.export.tf_example_inputs import parse_id_examples, parse_text_examples


class ClassifierExport(TaskExport):
    """Signatures:
        `serving_default`: ids -> `logits` `[batch, classes]`, `probabilities` (softmax).
        `text`: `text_a` `[batch]` -> `probabilities`, `label` (the label string).
        `text_pair`: `text_a`, `text_b` (batches of the same size) -> the same, for sentence-pair
            tasks.
        `serve_examples`: serialized `tf.Example`s `inputs` `[batch]` of int64 `input_word_ids`,
            `input_mask`, `input_type_ids` -> `classes` (the label names) and `scores` (the
            probabilities), both `[batch, classes]`: TF Serving's Classify API.
        `serve_text_examples`: the same on bytes features `text_a` and, for a pair, `text_b`.
    A regression model (one class) returns `logits` and `score` on ids, `score` on text, and
    `outputs` `[batch]` on examples (TF Serving's Regress API). The features: `tf_example_inputs`.

    Example:
    >>> from bert_tf.export import export_task_model
    >>> from bert_tf.models import BertClassifier, BertEncoder
    >>> from bert_tf.tokenization import BertTokenizer
    >>> classifier = BertClassifier(BertEncoder.from_config_file("bert_config.json"), num_classes=2)
    >>> path = export_task_model(classifier, "export/classifier",
    ...                          tokenizer=BertTokenizer("vocab.txt"),
    ...                          seq_length=16, labels=["negative", "positive"])
    >>> loaded = tf.saved_model.load(path)
    >>> loaded.signatures["text"](
    ...     text_a=tf.constant(["great movie"]))["label"]  # untrained: either label
    <tf.Tensor: shape=(1,), dtype=string, numpy=array([b'...'], dtype=object)>
    """

    def __init__(self, model, tokenizer, seq_length: int, labels=None):
        super().__init__(model, tokenizer, seq_length)
        self._regression = model.num_classes == 1
        if not self._regression:
            self.labels = label_names(labels, model.num_classes, "classifier")

    def serve(self, inputs):
        logits = self._logits(inputs)["logits"]  # [batch, classes]
        if self._regression:
            return {"logits": logits, "score": logits[:, 0]}
        return {"logits": logits, "probabilities": tf.nn.softmax(logits)}

    def classify_text(self, text_a):
        return self._predict([self._shared.tokenize(text_a)])

    def classify_text_pair(self, text_a, text_b):
        text_a = with_batch_checked(
            text_a, tf.shape(text_b)[0], "text_a and text_b must have the same batch size"
        )
        return self._predict([self._shared.tokenize(text_a), self._shared.tokenize(text_b)])

    def text_signatures(self) -> dict:
        return {
            "text": (self.classify_text, [text_spec("text_a")]),
            "text_pair": (self.classify_text_pair, [text_spec("text_a"), text_spec("text_b")]),
        }

    def example_signatures(self) -> dict:
        method_name = (
            tf.saved_model.REGRESS_METHOD_NAME
            if self._regression
            else tf.saved_model.CLASSIFY_METHOD_NAME
        )
        return {
            "serve_examples": (self.classify_examples, method_name),
            "serve_text_examples": (self.classify_text_examples, method_name),
        }

    def classify_examples(self, inputs):
        ids = checked_ids(parse_id_examples(inputs), self._model.model.encoder.bert_config)
        return self._classify_or_regress(self._shared.serve(ids))

    def classify_text_examples(self, inputs):
        text_a, text_b, has_text_b = parse_text_examples(inputs)
        segment_a = self._shared.tokenize(text_a)
        alone = self._tokenizer.pack_inputs([segment_a], self.seq_length)  # [batch, seq_length]
        paired = self._tokenizer.pack_inputs(
            [segment_a, self._shared.tokenize(text_b)], self.seq_length
        )
        packed = {name: tf.where(has_text_b[:, None], paired[name], alone[name]) for name in alone}
        # Only up to the batch's longest packed row, as the text signatures pad.
        width = tf.maximum(tf.reduce_max(tf.reduce_sum(packed["input_mask"], axis=1)), 2)
        return self._classify_or_regress(
            self._shared.serve({name: ids[:, :width] for name, ids in packed.items()})
        )

    def _classify_or_regress(self, outputs):
        """`serve`'s outputs as TF Serving's Classify API (`classes`,
        `scores`) or Regress API (`outputs`) wants them."""
        if self._regression:
            return {tf.saved_model.REGRESS_OUTPUTS: tf.cast(outputs["score"], tf.float32)}
        scores = tf.cast(outputs["probabilities"], tf.float32)  # [batch, classes]
        return {
            tf.saved_model.CLASSIFY_OUTPUT_CLASSES: tf.tile(
                self.labels[None], [tf.shape(scores)[0], 1]
            ),
            tf.saved_model.CLASSIFY_OUTPUT_SCORES: scores,
        }

    def _predict(self, segments):
        outputs = self._shared.serve(self._pack(segments))
        if self._regression:
            return {"score": outputs["score"]}
        probabilities = outputs["probabilities"]  # [batch, classes]
        return {
            "probabilities": probabilities,
            "label": tf.gather(self.labels, tf.argmax(probabilities, axis=-1)),
        }
