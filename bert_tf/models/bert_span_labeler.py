"""`BertSpanLabeler`: extractive question answering (SQuAD) start and end logits."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.models.bert_task_model import BertTaskModel


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(BertTaskModel):
    """A start vector and an end vector dotted with every token of `sequence_output`.

    Both vectors are one dense layer with two outputs (google-research/bert's
    `cls/squad/output_weights`, `[2, hidden]` in TF1). No dropout, as in the paper.
    Outputs float32 `{"start_logits": [batch, seq], "end_logits": [batch, seq]}`.

    Args:
        encoder: the `BertEncoder`; the model takes its dtype policy.
        dropout_rate: the dropout rate on `sequence_output`; 0 by default, as in the paper.
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        UserInputError: a `dropout_rate` outside [0, 1).

    Example:
    >>> from bert_tf.models.bert_encoder import BertEncoder
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": ids}
    >>> outputs = BertSpanLabeler(encoder)(inputs)
    >>> tuple(outputs["start_logits"].shape), tuple(outputs["end_logits"].shape)
    ((2, 8), (2, 8))
    """

    def __init__(self, encoder, dropout_rate: float = 0.0, **kwargs):
        super().__init__(encoder, dropout_rate, **kwargs)
        self.span_classifier = self.output_layer(2, "span_classifier")

    def call(self, inputs, training=False):
        # [batch, seq, hidden]
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        logits = ops.cast(
            self.span_classifier(self.dropout(sequence, training=training)), "float32"
        )
        return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}  # [batch, seq] each
