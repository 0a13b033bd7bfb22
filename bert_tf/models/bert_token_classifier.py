"""`BertTokenClassifier`: per-token tagging (NER, part of speech) on `sequence_output`."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.models.bert_task_model import LOGITS, BertTaskModel


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(BertTaskModel):
    """Dropout, then a dense layer to `num_classes` logits at every position.

    As in the paper, only the first sub-token of each word carries a label: the
    loss weights (not this model) say which positions count.
    Outputs `{"logits": [batch, seq, num_classes]}` in float32.

    Args:
        encoder: the `BertEncoder`; the model takes its dtype policy.
        num_classes: the number of tags.
        dropout_rate: the dropout rate on `sequence_output`.
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        UserInputError: a `dropout_rate` outside [0, 1).

    Example:
    >>> from bert_tf.models.bert_encoder import BertEncoder
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> model = BertTokenClassifier(encoder, num_classes=5)
    >>> inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": 0 * ids}
    >>> tuple(model(inputs)["logits"].shape)
    (2, 8, 5)
    """

    def __init__(self, encoder, num_classes: int, dropout_rate: float = 0.1, **kwargs):
        super().__init__(encoder, dropout_rate, **kwargs)
        self.num_classes = num_classes
        # Named apart from BertClassifier's `classifier`,
        # so that checkpoints tell the two heads apart.
        self.token_classifier = self.output_layer(num_classes, "token_classifier")

    def call(self, inputs, training=False):
        # [batch, seq, hidden]
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        # [batch, seq, num_classes]
        logits = self.token_classifier(self.dropout(sequence, training=training))
        return {LOGITS: ops.cast(logits, "float32")}

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes}
