"""`BertClassifier`: sentence and sentence-pair classification or regression on `pooled_output`."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.models.bert_task_model import LOGITS, BertTaskModel


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(BertTaskModel):
    """Dropout on the pooled `[CLS]` vector, then a dense layer to `num_classes` logits.

    `num_classes=1` is regression (STS-B): the single logit is the score.
    Outputs `{"logits": [batch, num_classes]}` in float32.

    Args:
        encoder: the `BertEncoder`; the model takes its dtype policy.
        num_classes: the number of labels; 1 for regression.
        dropout_rate: the dropout rate on the pooled vector.
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        UserInputError: a `dropout_rate` outside [0, 1).

    Example:
    >>> from bert_tf.models.bert_encoder import BertEncoder
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> model = BertClassifier(encoder, num_classes=3)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": 0 * ids}
    >>> tuple(model(inputs)["logits"].shape)
    (2, 3)
    """

    def __init__(self, encoder, num_classes: int, dropout_rate: float = 0.1, **kwargs):
        super().__init__(encoder, dropout_rate, **kwargs)
        self.num_classes = num_classes
        self.classifier = self.output_layer(num_classes, "classifier")

    def call(self, inputs, training=False):
        pooled = self.encoder.pooled_output(inputs, training=training)  # [batch, hidden]
        logits = self.classifier(self.dropout(pooled, training=training))  # [batch, num_classes]
        return {LOGITS: ops.cast(logits, "float32")}

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes}
