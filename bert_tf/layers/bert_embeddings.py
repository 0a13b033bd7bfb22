"""`BertEmbeddings`: word + learned position + token type embeddings, then LayerNorm and dropout."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.errors import UserInputError
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import bert_initializer, bert_layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(keras.layers.Layer):
    """The input embeddings of BERT.

    TF1 names: `bert/embeddings/{word,position,token_type}_embeddings` and
    `bert/embeddings/LayerNorm`. LayerNorm runs in float32 under mixed precision.

    Call arguments:
        input_word_ids: int `[batch, seq]` WordPiece ids, `seq` up to `max_position_embeddings`.
        input_type_ids: int `[batch, seq]` segment ids.

    Returns the embeddings `[batch, seq, hidden]`, in the compute dtype.

    Args:
        vocab_size: the number of WordPiece ids.
        hidden_size: the embedding width.
        max_position_embeddings: the position table's size, the longest sequence.
        type_vocab_size: the segment table's size.
        hidden_dropout_prob: the dropout rate after the LayerNorm.
        initializer_range: the standard deviation of the truncated-normal initializer.
        **kwargs: `keras.layers.Layer` arguments, such as `name` and `dtype`.

    Raises:
        UserInputError: when called, a static `seq` over `max_position_embeddings`.

    Example:
    >>> layer = BertEmbeddings(vocab_size=100, hidden_size=16,
    ...                        max_position_embeddings=32, type_vocab_size=2)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> tuple(layer(ids, keras.ops.zeros((2, 8), "int32")).shape)
    (2, 8, 16)
    """

    def __init__(
        self,
        vocab_size,
        hidden_size,
        max_position_embeddings,
        type_vocab_size,
        hidden_dropout_prob=0.1,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.hidden_dropout_prob = hidden_dropout_prob
        self.initializer_range = initializer_range

        initializer = bert_initializer(initializer_range)
        self.word_embeddings = keras.layers.Embedding(
            vocab_size,
            hidden_size,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="word_embeddings",
        )
        self.token_type_embeddings = keras.layers.Embedding(
            type_vocab_size,
            hidden_size,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="token_type_embeddings",
        )
        self.layer_norm = bert_layer_norm("layer_norm")
        self.dropout = Dropout(hidden_dropout_prob, dtype=self.dtype_policy)

    def build(self, input_word_ids_shape, input_type_ids_shape=None):
        self.word_embeddings.build(input_word_ids_shape)
        self.token_type_embeddings.build(input_word_ids_shape)
        self.position_embeddings = self.add_weight(
            shape=(self.max_position_embeddings, self.hidden_size),
            initializer=bert_initializer(self.initializer_range),
            name="position_embeddings",
        )
        self.layer_norm.build((None, None, self.hidden_size))

    def call(self, input_word_ids, input_type_ids, training=False):
        # input_word_ids, input_type_ids: [batch, seq]
        seq_length = ops.shape(input_word_ids)[1]
        # a static length
        if isinstance(seq_length, int) and seq_length > self.max_position_embeddings:
            raise UserInputError(
                f"sequence length {seq_length} exceeds max_position_embeddings "
                f"{self.max_position_embeddings}"
            )
        embeddings = self.word_embeddings(input_word_ids)  # [batch, seq, hidden]
        embeddings += self.token_type_embeddings(input_type_ids)
        position = ops.cast(self.position_embeddings[:seq_length], self.compute_dtype)
        embeddings += position[None]  # [1, seq, hidden] broadcast over the batch
        embeddings = self.layer_norm(embeddings)  # float32
        embeddings = ops.cast(embeddings, self.compute_dtype)
        return self.dropout(embeddings, training=training)

    def compute_output_shape(self, input_word_ids_shape, input_type_ids_shape=None):
        return tuple(input_word_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "hidden_size": self.hidden_size,
                "max_position_embeddings": self.max_position_embeddings,
                "type_vocab_size": self.type_vocab_size,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "initializer_range": self.initializer_range,
            }
        )
        return config
