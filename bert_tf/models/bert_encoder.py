"""`BertEncoder`: the BERT Transformer encoder as a Keras 3 functional model."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.bert_config import BertConfig
from bert_tf.layers.bert_embeddings import BertEmbeddings
from bert_tf.layers.initializers import bert_initializer
from bert_tf.layers.transformer_block import TransformerBlock

# The encoder's input names, in the order of google-research/bert's `input_ids`,
# `input_mask` and `segment_ids`.
ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")

# Added to the attention scores of padding keys (float32), as in google-research/bert.
_MASK_ADDER = -10000.0


def attention_bias_from_mask(input_mask):
    """`input_mask` `[batch, seq]` (1 = real token) to a float32 bias `[batch, 1, 1, seq]`."""
    mask = ops.cast(input_mask, "float32")
    return (1.0 - mask)[:, None, None, :] * _MASK_ADDER


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(keras.Model):
    """BERT (Devlin et al., 2018): embeddings, post-LN Transformer blocks and a tanh pooler.

    The constructor arguments are the fields of google-research/bert's
    `bert_config.json` (and `extra`, its other keys, kept for `bert_config`), so
    `BertEncoder.from_config_file(path)` and
    `BertEncoder(**BertConfig.from_json_file(path).encoder_kwargs())` are the same.

    Inputs, a dict of int32 `[batch, seq]` tensors, any `seq` up to
    `max_position_embeddings`:
        `input_word_ids`: WordPiece ids.
        `input_mask`: 1 for real tokens, 0 for padding.
        `input_type_ids`: segment ids, 0 or 1.

    Outputs, a dict:
        `sequence_output`: `[batch, seq, hidden]`, the last block's output.
        `pooled_output`: `[batch, hidden]`, tanh dense on the `[CLS]` vector.
        `encoder_outputs`: list of `num_hidden_layers` tensors `[batch, seq, hidden]`.

    `call_at_positions` and `pooled_output` run the last block only where the caller
    reads it (pretraining's masked positions, a classifier's `[CLS]`).

    Args:
        vocab_size, hidden_size: the WordPiece vocab's size and the hidden width.
        num_hidden_layers, num_attention_heads: the Transformer blocks and their heads.
        intermediate_size, hidden_act: the feed-forward width and activation.
        hidden_dropout_prob, attention_probs_dropout_prob: the dropout rates.
        max_position_embeddings, type_vocab_size: the position and segment tables' sizes.
        initializer_range: the standard deviation of the truncated-normal initializer.
        extra: the config file's other keys, kept for `bert_config`.
        dtype: a Keras dtype policy, such as "mixed_bfloat16"; None: Keras's global policy.
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        ConfigError: an argument a `bert_config.json` could not have.

    Example:
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=2,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> ids = keras.ops.ones((2, 8), "int32")
    >>> outputs = encoder({"input_word_ids": ids, "input_mask": ids,
    ...                    "input_type_ids": keras.ops.zeros((2, 8), "int32")})
    >>> tuple(outputs["pooled_output"].shape), len(outputs["encoder_outputs"])
    ((2, 16), 2)
    >>> inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": 0 * ids}
    >>> positions = keras.ops.convert_to_tensor([[3, 5], [1, 2]])
    >>> tuple(encoder.call_at_positions(inputs, positions)["sequence_output"].shape)
    (2, 2, 16)
    """

    def __init__(
        self,
        vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=512,
        type_vocab_size=16,
        initializer_range=0.02,
        extra=None,
        dtype=None,
        **kwargs,
    ):
        # Checks every argument the way a bert_config.json is checked.
        config = BertConfig(
            vocab_size,
            hidden_size,
            num_hidden_layers,
            num_attention_heads,
            intermediate_size,
            hidden_act,
            hidden_dropout_prob,
            attention_probs_dropout_prob,
            max_position_embeddings,
            type_vocab_size,
            initializer_range,
            dict(extra or {}),
        )

        # === Layers ===
        self.embeddings = BertEmbeddings(
            vocab_size,
            hidden_size,
            max_position_embeddings,
            type_vocab_size,
            hidden_dropout_prob,
            initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        self.transformer_layers = [
            TransformerBlock(
                hidden_size,
                num_attention_heads,
                intermediate_size,
                hidden_act,
                hidden_dropout_prob,
                attention_probs_dropout_prob,
                initializer_range,
                dtype=dtype,
                name=f"transformer_layer_{i}",
            )
            for i in range(num_hidden_layers)
        ]
        self.pooler = keras.layers.Dense(
            hidden_size,
            activation="tanh",
            kernel_initializer=bert_initializer(initializer_range),
            dtype=dtype,
            name="pooler",
        )

        # === Functional graph ===
        inputs = {
            name: keras.Input(shape=(None,), dtype="int32", name=name) for name in ENCODER_INPUTS
        }
        super().__init__(inputs=inputs, outputs=self._encode(inputs), **kwargs)
        # The functional constructor ignores `dtype`: set the model's own policy, which
        # `get_config` saves and the task heads copy.
        self.dtype_policy = keras.dtype_policies.get(dtype)

        # === Config ===
        for name, value in config.encoder_kwargs().items():
            setattr(self, name, value)

    def _encode(self, inputs, output_positions=None, training=None):
        """The encoder's forward pass; with `output_positions`, the last block's output only at
        `[CLS]` and those positions (see `call_at_positions`)."""
        # [batch, seq, hidden]
        x = self.embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
        attention_bias = attention_bias_from_mask(inputs["input_mask"])  # [batch, 1, 1, seq]
        encoder_outputs = []
        for block in self.transformer_layers[:-1]:
            x = block(x, attention_bias, training=training)
            encoder_outputs.append(x)
        last_block = self.transformer_layers[-1]
        if output_positions is None:
            x = last_block(x, attention_bias, training=training)  # [batch, seq, hidden]
            return {
                "sequence_output": x,
                "pooled_output": self.pooler(x[:, 0, :]),  # [batch, hidden]
                "encoder_outputs": encoder_outputs + [x],
            }
        output_positions = ops.cast(output_positions, "int32")
        cls_position = ops.zeros((ops.shape(output_positions)[0], 1), "int32")
        # [batch, 1 + n, hidden]
        x = last_block(
            x,
            attention_bias,
            ops.concatenate([cls_position, output_positions], axis=1),
            training=training,
        )
        return {"sequence_output": x[:, 1:, :], "pooled_output": self.pooler(x[:, 0, :])}

    def call_at_positions(self, inputs, output_positions, training=False):
        """Runs the encoder for a caller that reads only some positions of the last layer.

        The last block computes its queries, feed-forward network and output only at `[CLS]`
        and `output_positions`, attending over every token: `call`'s vectors at those positions.

        Args:
            inputs: the encoder's input dict.
            output_positions: int `[batch, n]`, the positions to compute.
            training: whether dropout applies.

        Returns:
            A dict: `sequence_output` `[batch, n, hidden]`, the last block's output at
            `output_positions`, and `pooled_output` `[batch, hidden]`.
        """
        return self._encode(inputs, output_positions, training=training)

    def pooled_output(self, inputs, training=False):
        """`pooled_output` alone: the last block runs at `[CLS]` only, as a classifier needs.

        Args:
            inputs: the encoder's input dict.
            training: whether dropout applies.

        Returns:
            `pooled_output` `[batch, hidden]`, equal to `call`'s.
        """
        no_positions = ops.zeros((ops.shape(inputs["input_word_ids"])[0], 0), "int32")  # [batch, 0]
        return self._encode(inputs, no_positions, training=training)["pooled_output"]

    @classmethod
    def from_bert_config(cls, config: BertConfig, **kwargs) -> "BertEncoder":
        """Builds an encoder with freshly initialised weights from a `BertConfig`.

        Args:
            config: the sizes.
            **kwargs: other constructor arguments, such as `dtype` or `name`.

        Returns:
            The encoder.
        """
        return cls(**config.encoder_kwargs(), **kwargs)

    @classmethod
    def from_config_file(cls, path, **kwargs) -> "BertEncoder":
        """Builds an encoder from a google-research/bert `bert_config.json`.

        Args:
            path: the config file.
            **kwargs: other constructor arguments, such as `dtype` or `name`.

        Returns:
            The encoder, freshly initialised.

        Raises:
            ConfigError: the file is unreadable or has a bad field.
        """
        return cls.from_bert_config(BertConfig.from_json_file(path), **kwargs)

    @property
    def word_embedding_matrix(self):
        """The `[vocab_size, hidden]` word-embedding variable; the masked-LM head's output
        projection is tied to it."""
        return self.embeddings.word_embeddings.embeddings

    @property
    def bert_config(self) -> BertConfig:
        """The encoder's `BertConfig`, `extra` keys included (what `bert_config.json` holds)."""
        fields = {name: getattr(self, name) for name in BertConfig.field_names()}
        return BertConfig(**fields, extra=dict(self.extra))

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            **self.bert_config.encoder_kwargs(),
        }
