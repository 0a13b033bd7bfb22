"""`MaskedLMHead`: BERT's masked-LM output layer, tied to the word embeddings."""

from __future__ import annotations

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.activations import get_activation
from bert_tf.layers.initializers import bert_initializer, bert_layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMHead(keras.layers.Layer):
    """Transforms the vectors at the masked positions and scores them against the vocab.

    The transform is dense + activation + LayerNorm (`cls/predictions/transform/...`
    in TF1), and the logits are the transformed vectors times the word-embedding
    matrix, transposed, plus a per-token bias (`cls/predictions/output_bias`).
    The embedding matrix is passed at call time, not owned, so it stays tied to
    the encoder's.

    Call arguments:
        masked_states: `[batch, num_predictions, hidden]`, the encoder's output at the
            masked positions (`BertEncoder.call_at_positions`, or `gather_positions`).
        word_embeddings: the encoder's embedding matrix `[vocab_size, hidden]`.
        candidate_ids: optional int `[candidates]`: score these vocab ids only (a sampled
            softmax, `sampled_masked_lm`), not the whole vocab.

    Returns float32 logits `[batch, num_predictions, vocab_size]`, or
    `[batch, num_predictions, candidates]` with `candidate_ids`.

    Args:
        vocab_size: the number of WordPiece ids, the output bias's size.
        hidden_size: the encoder's hidden width.
        hidden_act: the transform's activation, a `hidden_act` name of bert_config.json.
        initializer_range: the standard deviation of the truncated-normal initializer.
        **kwargs: `keras.layers.Layer` arguments, such as `name` and `dtype`.

    Raises:
        UserInputError: an unknown `hidden_act`.

    Example:
    >>> head = MaskedLMHead(vocab_size=100, hidden_size=16, hidden_act="gelu")
    >>> logits = head(keras.ops.ones((2, 3, 16)), keras.ops.ones((100, 16)))
    >>> tuple(logits.shape)
    (2, 3, 100)
    >>> tuple(head(keras.ops.ones((2, 3, 16)), keras.ops.ones((100, 16)),
    ...            candidate_ids=[7, 0]).shape)
    (2, 3, 2)
    """

    def __init__(
        self, vocab_size, hidden_size, hidden_act="gelu", initializer_range=0.02, **kwargs
    ):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self._activation = get_activation(hidden_act)
        self.transform = keras.layers.Dense(
            self.hidden_size,
            kernel_initializer=bert_initializer(initializer_range),
            dtype=self.dtype_policy,
            name="transform",
        )
        self.layer_norm = bert_layer_norm("layer_norm")

    @classmethod
    def for_encoder(cls, encoder) -> "MaskedLMHead":
        """The head of a `BertEncoder`: its sizes, activation, initializer range and dtype policy,
        named `masked_lm_head` (where checkpoints put `cls/predictions/...`).

        Args:
            encoder: the `BertEncoder` the head scores for.

        Returns:
            A new, unbuilt head; call it with the encoder's `word_embedding_matrix`.
        """
        return cls(
            encoder.vocab_size,
            encoder.hidden_size,
            hidden_act=encoder.hidden_act,
            initializer_range=encoder.initializer_range,
            dtype=encoder.dtype_policy,
            name="masked_lm_head",
        )

    def build(self, masked_states_shape, word_embeddings_shape=None):
        self.transform.build((None, None, self.hidden_size))
        self.layer_norm.build((None, None, self.hidden_size))
        self.output_bias = self.add_weight(
            shape=(self.vocab_size,), initializer="zeros", name="output_bias"
        )

    def call(self, masked_states, word_embeddings, candidate_ids=None):
        # masked_states: [batch, predictions, hidden]
        masked = self.layer_norm(self._activation(self.transform(masked_states)))  # float32
        masked = ops.cast(masked, self.compute_dtype)
        embeddings = ops.cast(word_embeddings, self.compute_dtype)  # [vocab, hidden]
        bias = ops.cast(self.output_bias, "float32")  # [vocab]
        if candidate_ids is not None:
            embeddings = ops.take(embeddings, candidate_ids, axis=0)  # [candidates, hidden]
            bias = ops.take(bias, candidate_ids, axis=0)  # [candidates]
        # One 2-D matmul against the untransposed table: its gradient is then
        # [vocab, hidden] directly, with no transpose of a vocab-sized tensor.
        flat = ops.reshape(masked, (-1, self.hidden_size))  # [batch * predictions, hidden]
        # [batch * predictions, vocab or candidates]
        logits = tf.linalg.matmul(flat, embeddings, transpose_b=True)
        batch, predictions = ops.shape(masked)[0], ops.shape(masked)[1]
        logits = ops.reshape(logits, (batch, predictions, ops.shape(embeddings)[0]))
        return ops.cast(logits, "float32") + bias

    def compute_output_shape(
        self, masked_states_shape, word_embeddings_shape=None, candidate_ids_shape=None
    ):
        scored = self.vocab_size if candidate_ids_shape is None else candidate_ids_shape[0]
        return tuple(masked_states_shape[:-1]) + (scored,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "hidden_size": self.hidden_size,
                "hidden_act": self.hidden_act,
                "initializer_range": self.initializer_range,
            }
        )
        return config
