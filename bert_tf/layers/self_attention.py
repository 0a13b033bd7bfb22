"""`SelfAttention`: multi-head scaled dot-product self-attention with separate Q, K, V."""

from __future__ import annotations

import math

import keras
from keras import ops

from bert_tf.errors import UserInputError
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import bert_initializer


@keras.saving.register_keras_serializable(package="bert_tf")
class SelfAttention(keras.layers.Layer):
    """BERT's self-attention, without the output projection.

    The query, key and value projections are three `[hidden, hidden]` dense
    layers, so they map one to one onto the TF1 names
    `attention/self/{query,key,value}/{kernel,bias}`. (`keras.layers.MultiHeadAttention`
    stores `[hidden, heads, head_size]` kernels and runs its softmax in the
    compute dtype; BERT's layout and a float32 softmax are simpler to keep here.)

    Call arguments:
        hidden_states: `[batch, seq, hidden]`, the keys' and values' source.
        attention_bias: float32 `[batch, 1, 1, seq]`, 0 for real keys and a large
            negative number for padding (see `BertEncoder`).
        query_states: `[batch, queries, hidden]`, the states that attend; by default
            `hidden_states` (self-attention at every position).

    Returns the per-head context vectors, concatenated: `[batch, queries, hidden]`.

    Args:
        hidden_size: the hidden width, a multiple of `num_attention_heads`.
        num_attention_heads: the number of heads.
        attention_probs_dropout_prob: the dropout rate on the attention probabilities.
        initializer_range: the standard deviation of the truncated-normal initializer.
        **kwargs: `keras.layers.Layer` arguments, such as `name` and `dtype`.

    Raises:
        UserInputError: a `hidden_size` that is not a multiple of `num_attention_heads`.

    Example:
    >>> layer = SelfAttention(hidden_size=16, num_attention_heads=2)
    >>> x = keras.ops.ones((2, 5, 16))
    >>> tuple(layer(x, keras.ops.zeros((2, 1, 1, 5))).shape)
    (2, 5, 16)
    """

    def __init__(
        self,
        hidden_size,
        num_attention_heads,
        attention_probs_dropout_prob=0.1,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if hidden_size % num_attention_heads:
            raise UserInputError(
                f"hidden_size {hidden_size} is not a multiple of "
                f"num_attention_heads {num_attention_heads}"
            )
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range
        self.head_size = hidden_size // num_attention_heads

        def projection(name):
            return keras.layers.Dense(
                hidden_size,
                kernel_initializer=bert_initializer(initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query = projection("query")
        self.key = projection("key")
        self.value = projection("value")
        self.dropout = Dropout(attention_probs_dropout_prob, dtype=self.dtype_policy)

    def build(self, hidden_states_shape, attention_bias_shape=None):
        for dense in (self.query, self.key, self.value):
            dense.build(hidden_states_shape)

    def _split_heads(self, x, batch, seq):
        # [batch, seq, hidden] -> [batch, heads, seq, head_size]
        x = ops.reshape(x, (batch, seq, self.num_attention_heads, self.head_size))
        return ops.transpose(x, (0, 2, 1, 3))

    def call(self, hidden_states, attention_bias, query_states=None, training=False):
        if query_states is None:
            query_states = hidden_states
        batch, seq = ops.shape(hidden_states)[0], ops.shape(hidden_states)[1]
        queries = ops.shape(query_states)[1]
        query = self._split_heads(self.query(query_states), batch, queries)
        key = self._split_heads(self.key(hidden_states), batch, seq)
        value = self._split_heads(self.value(hidden_states), batch, seq)

        # Fold the 1/sqrt(d) scale into the query: [batch, seq, d] instead of [seq, seq].
        query = query * ops.cast(1.0 / math.sqrt(self.head_size), query.dtype)
        scores = ops.matmul(query, ops.transpose(key, (0, 1, 3, 2)))  # [batch, heads, queries, seq]
        # Keras casts float inputs to the compute dtype: take the bias back to float32.
        scores = ops.cast(scores, "float32") + ops.cast(attention_bias, "float32")
        probs = ops.cast(ops.softmax(scores, axis=-1), self.compute_dtype)
        probs = self.dropout(probs, training=training)

        context = ops.matmul(probs, value)  # [batch, heads, queries, head_size]
        context = ops.transpose(context, (0, 2, 1, 3))
        return ops.reshape(context, (batch, queries, self.hidden_size))

    def compute_output_shape(
        self, hidden_states_shape, attention_bias_shape=None, query_states_shape=None
    ):
        return tuple(query_states_shape or hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "num_attention_heads": self.num_attention_heads,
                "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
                "initializer_range": self.initializer_range,
            }
        )
        return config
