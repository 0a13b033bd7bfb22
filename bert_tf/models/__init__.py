"""Keras 3 models: the encoder and the networks built on it."""

from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.models.pretraining_loss import pretraining_losses

__all__ = ["BertEncoder", "BertPretrainer", "pretraining_losses"]
