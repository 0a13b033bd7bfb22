"""`TransformerBlock`: one post-LayerNorm Transformer encoder layer, as in BERT."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.layers.activations import get_activation
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import bert_initializer, bert_layer_norm
from bert_tf.layers.positions import gather_positions
from bert_tf.layers.self_attention import SelfAttention


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerBlock(keras.layers.Layer):
    """Self-attention and a feed-forward network, each followed by residual + LayerNorm.

    Sub-layers and their TF1 names under `bert/encoder/layer_N/`:
        `self_attention`        attention/self/{query,key,value}
        `attention_output`      attention/output/dense
        `attention_layer_norm`  attention/output/LayerNorm
        `intermediate`          intermediate/dense
        `output_dense`          output/dense
        `output_layer_norm`     output/LayerNorm

    Call arguments:
        hidden_states: `[batch, seq, hidden]`.
        attention_bias: float32 `[batch, 1, 1, seq]` (see `SelfAttention`).
        output_positions: optional int `[batch, n]`: compute the output only at these
            positions, still attending over all `seq` keys. The result `[batch, n, hidden]`
            equals the full output gathered there; the queries, the feed-forward network
            and the residuals then run on `n` rows instead of `seq`.

    Returns `[batch, seq, hidden]`, or `[batch, n, hidden]` with `output_positions`.

    Args:
        hidden_size: the hidden width, a multiple of `num_attention_heads`.
        num_attention_heads: the number of attention heads.
        intermediate_size: the feed-forward network's inner width.
        hidden_act: the feed-forward activation, a `hidden_act` name of bert_config.json.
        hidden_dropout_prob: the dropout rate on the attention and feed-forward outputs.
        attention_probs_dropout_prob: the dropout rate on the attention probabilities.
        initializer_range: the standard deviation of the truncated-normal initializer.
        **kwargs: `keras.layers.Layer` arguments, such as `name` and `dtype`.

    Raises:
        UserInputError: an unknown `hidden_act`, or a `hidden_size` that is not a multiple of
            `num_attention_heads`.

    Example:
    >>> block = TransformerBlock(hidden_size=16, num_attention_heads=2, intermediate_size=64)
    >>> x = keras.ops.ones((2, 5, 16))
    >>> tuple(block(x, keras.ops.zeros((2, 1, 1, 5))).shape)
    (2, 5, 16)
    """

    def __init__(
        self,
        hidden_size,
        num_attention_heads,
        intermediate_size,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range

        self._activation = get_activation(hidden_act)
        initializer = bert_initializer(initializer_range)

        def dense(units, name):
            return keras.layers.Dense(
                units, kernel_initializer=initializer, dtype=self.dtype_policy, name=name
            )

        self.self_attention = SelfAttention(
            hidden_size,
            num_attention_heads,
            attention_probs_dropout_prob,
            initializer_range,
            dtype=self.dtype_policy,
            name="self_attention",
        )
        self.attention_output = dense(hidden_size, "attention_output")
        self.attention_layer_norm = bert_layer_norm("attention_layer_norm")
        self.intermediate = dense(intermediate_size, "intermediate")
        self.output_dense = dense(hidden_size, "output_dense")
        self.output_layer_norm = bert_layer_norm("output_layer_norm")
        self.attention_output_dropout = Dropout(hidden_dropout_prob, dtype=self.dtype_policy)
        self.output_dropout = Dropout(hidden_dropout_prob, dtype=self.dtype_policy)

    def build(self, hidden_states_shape, attention_bias_shape=None):
        hidden_shape = (None, None, self.hidden_size)
        self.self_attention.build(hidden_shape)
        self.attention_output.build(hidden_shape)
        self.attention_layer_norm.build(hidden_shape)
        self.intermediate.build(hidden_shape)
        self.output_dense.build((None, None, self.intermediate_size))
        self.output_layer_norm.build(hidden_shape)

    def call(self, hidden_states, attention_bias, output_positions=None, training=False):
        # hidden_states: [batch, seq, hidden]; queries: [batch, n, hidden], n = seq by default.
        queries = (
            hidden_states
            if output_positions is None
            else gather_positions(hidden_states, output_positions)
        )
        attention = self.self_attention(
            hidden_states, attention_bias, query_states=queries, training=training
        )
        attention = self.attention_output_dropout(
            self.attention_output(attention), training=training
        )
        attention = self.attention_layer_norm(queries + attention)  # float32
        attention = ops.cast(attention, self.compute_dtype)

        intermediate = self._activation(self.intermediate(attention))  # [batch, n, intermediate]
        output = self.output_dropout(self.output_dense(intermediate), training=training)
        output = self.output_layer_norm(attention + output)  # float32
        return ops.cast(output, self.compute_dtype)

    def compute_output_shape(
        self, hidden_states_shape, attention_bias_shape=None, output_positions_shape=None
    ):
        if output_positions_shape is None:
            return tuple(hidden_states_shape)
        return tuple(output_positions_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "num_attention_heads": self.num_attention_heads,
                "intermediate_size": self.intermediate_size,
                "hidden_act": self.hidden_act,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
                "initializer_range": self.initializer_range,
            }
        )
        return config
