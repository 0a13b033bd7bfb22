"""`ClassifierExport`: a `BertClassifier` as a SavedModel, on ids and on one or two texts."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.export.task_module import TaskExport, label_names, text_spec, with_batch_checked


class ClassifierExport(TaskExport):
    """Signatures:
        `serving_default`: ids -> `logits` `[batch, classes]`, `probabilities` (softmax).
        `text`: `text_a` `[batch]` -> `probabilities`, `label` (the label string).
        `text_pair`: `text_a`, `text_b` (batches of the same size) -> the same, for sentence-pair tasks.
    A regression model (one class) returns `logits` and `score` on ids, `score` on text.

    Example:
    >>> from bert_tf.export import export_task_model
    >>> from bert_tf.models import BertClassifier, BertEncoder
    >>> from bert_tf.tokenization import BertTokenizer
    >>> classifier = BertClassifier(BertEncoder.from_config_file("bert_config.json"), num_classes=2)
    >>> path = export_task_model(classifier, "export/classifier", tokenizer=BertTokenizer("vocab.txt"),
    ...                          seq_length=16, labels=["negative", "positive"])
    >>> loaded = tf.saved_model.load(path)
    >>> loaded.signatures["text"](text_a=tf.constant(["great movie"]))["label"]  # untrained: either label
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
        text_a = with_batch_checked(text_a, tf.shape(text_b)[0], "text_a and text_b must have the same batch size")
        return self._predict([self._shared.tokenize(text_a), self._shared.tokenize(text_b)])

    def text_signatures(self) -> dict:
        return {"text": (self.classify_text, [text_spec("text_a")]),
                "text_pair": (self.classify_text_pair, [text_spec("text_a"), text_spec("text_b")])}

    def _predict(self, segments):
        outputs = self._shared.serve(self._pack(segments))
        if self._regression:
            return {"score": outputs["score"]}
        probabilities = outputs["probabilities"]  # [batch, classes]
        return {"probabilities": probabilities,
                "label": tf.gather(self.labels, tf.argmax(probabilities, axis=-1))}
