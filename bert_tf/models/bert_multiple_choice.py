"""`BertMultipleChoice`: pick one of several (context, choice) pairs (SWAG)."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.models.bert_task_model import LOGITS, BertTaskModel


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(BertTaskModel):
    """Each (context, choice) pair is encoded; a vector V dotted with each pooled output scores it.

    Inputs are the encoder's, with a choices axis: int32 `[batch, num_choices, seq]`.
    Outputs `{"logits": [batch, num_choices]}` in float32, for a softmax over the choices.

    Args:
        encoder: the `BertEncoder`; the model takes its dtype policy.
        dropout_rate: the dropout rate on each pooled vector.
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        UserInputError: a `dropout_rate` outside [0, 1).

    Example:
    >>> from bert_tf.models.bert_encoder import BertEncoder
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> ids = keras.ops.ones((2, 4, 8), "int32")
    >>> model = BertMultipleChoice(encoder)
    >>> inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": 0 * ids}
    >>> tuple(model(inputs)["logits"].shape)
    (2, 4)
    """

    dummy_batch_shape = (1, 1)  # [batch, choices]

    def __init__(self, encoder, dropout_rate: float = 0.1, **kwargs):
        super().__init__(encoder, dropout_rate, **kwargs)
        self.choice_scorer = self.output_layer(1, "choice_scorer", use_bias=False)

    def call(self, inputs, training=False):
        shape = ops.shape(inputs["input_word_ids"])  # [batch, choices, seq]
        flat = {name: ops.reshape(inputs[name], (-1, shape[-1])) for name in ENCODER_INPUTS}
        pooled = self.encoder.pooled_output(flat, training=training)  # [batch * choices, hidden]
        scores = self.choice_scorer(self.dropout(pooled, training=training))  # [batch * choices, 1]
        return {LOGITS: ops.cast(ops.reshape(scores, (shape[0], shape[1])), "float32")}
