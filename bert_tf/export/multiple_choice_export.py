"""`MultipleChoiceExport`: a `BertMultipleChoice` as a SavedModel, on ids and on texts."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.export.task_module import TaskExport, id_spec, text_spec, with_batch_checked


class MultipleChoiceExport(TaskExport):
    """Signatures:
        `serving_default`: ids `[batch, choices, seq]` -> `logits`, `probabilities`
            `[batch, choices]`.
        `text`: `text_a` `[batch]` (the context) and `choices` `[batch, choices]` ->
            `probabilities` and `label`, the index of the best choice.

    Example:
    >>> from bert_tf.export import export_task_model
    >>> from bert_tf.models import BertEncoder, BertMultipleChoice
    >>> from bert_tf.tokenization import BertTokenizer
    >>> model = BertMultipleChoice(BertEncoder.from_config_file("bert_config.json"))
    >>> path = export_task_model(model, "export/swag", tokenizer=BertTokenizer("vocab.txt"),
    ...                          seq_length=16)
    >>> loaded = tf.saved_model.load(path)
    >>> out = loaded.signatures["text"](text_a=tf.constant(["She opened the door."]),
    ...                                 choices=tf.constant([["She walked in.", "The door ate."]]))
    >>> out["probabilities"].shape, out["label"].shape
    (TensorShape([1, 2]), TensorShape([1]))
    """

    def id_spec(self):
        return id_spec(rank=3)

    def serve(self, inputs):
        logits = self._logits(inputs)["logits"]  # [batch, choices]
        return {"logits": logits, "probabilities": tf.nn.softmax(logits)}

    def choose_text(self, text_a, choices):
        shape = tf.shape(choices)  # [batch, choices]
        text_a = with_batch_checked(
            text_a, shape[0], "text_a and choices must have the same batch size"
        )
        with tf.control_dependencies(
            [
                tf.debugging.Assert(
                    (shape[0] == 0) | (shape[1] > 0),
                    ["choices must hold at least one choice per example"],
                )
            ]
        ):
            choices = tf.identity(choices)
        contexts = tf.reshape(tf.repeat(text_a[:, None], shape[1], axis=1), [-1])
        packed = self._pack(
            [self._shared.tokenize(contexts), self._shared.tokenize(tf.reshape(choices, [-1]))]
        )
        # [batch * choices, seq] -> [batch, choices, seq];
        # seq named, since an empty batch cannot infer it.
        packed = {
            name: tf.reshape(value, [shape[0], shape[1], tf.shape(value)[1]])
            for name, value in packed.items()
        }
        probabilities = self._shared.serve(packed)["probabilities"]
        label = tf.cond(
            tf.size(probabilities)
            > 0,  # an empty batch of no choices has no axis to take the best of
            lambda: tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            lambda: tf.zeros([shape[0]], tf.int32),
        )
        return {"probabilities": probabilities, "label": label}

    def text_signatures(self) -> dict:
        return {"text": (self.choose_text, [text_spec("text_a"), text_spec("choices", rank=2)])}
