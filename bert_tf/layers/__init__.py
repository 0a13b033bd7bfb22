"""Keras 3 layers that BERT is built from."""

from bert_tf.layers.activations import get_activation
from bert_tf.layers.bert_embeddings import BertEmbeddings
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.layers.positions import gather_positions
from bert_tf.layers.self_attention import SelfAttention
from bert_tf.layers.transformer_block import TransformerBlock

__all__ = [
    "BertEmbeddings",
    "Dropout",
    "MaskedLMHead",
    "SelfAttention",
    "TransformerBlock",
    "gather_positions",
    "get_activation",
]
