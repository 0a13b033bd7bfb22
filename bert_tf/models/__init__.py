"""Keras 3 models: the encoder and the networks built on it."""

from bert_tf.models.bert_classifier import BertClassifier
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_multiple_choice import BertMultipleChoice
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.models.bert_span_labeler import BertSpanLabeler
from bert_tf.models.bert_task_model import BertTaskModel
from bert_tf.models.bert_token_classifier import BertTokenClassifier
from bert_tf.models.pretraining_loss import pretraining_losses

__all__ = [
    "BertClassifier",
    "BertEncoder",
    "BertMultipleChoice",
    "BertPretrainer",
    "BertSpanLabeler",
    "BertTaskModel",
    "BertTokenClassifier",
    "pretraining_losses",
]
