"""`BertTaskModel`: the base of the fine-tuning models, a `BertEncoder` plus one output layer."""

from __future__ import annotations

import keras

from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import task_head_initializer
from bert_tf.models.bert_encoder import ENCODER_INPUTS, BertEncoder
from bert_tf.models.train_step import GlobalClippingTrainStep

LOGITS = "logits"  # the output of the classifier, token classifier and multiple-choice models


class BertTaskModel(GlobalClippingTrainStep, keras.Model):
    """A `BertEncoder` with a task head: the paper's section 4, all parameters fine-tuned.

    Subclasses build their head in `__init__` and map the encoder's outputs to a
    dict of float32 tensors in `call`. This base stores the encoder under
    `encoder` (where `bert_tf.checkpoints.load_checkpoint` looks for it) and
    serializes the encoder inside `get_config`. Callers run
    `build_with_dummy_inputs` before loading a checkpoint, so that every weight exists.
    `fit` clips the gradients of the whole global batch (`GlobalClippingTrainStep`).

    Args:
        encoder: the `BertEncoder`; the model and its head take its dtype policy.
        dropout_rate: the dropout rate before the head.
        head_initializer: the head kernel's initializer, one of `HEAD_INITIALIZERS`:
            "normal" (Hugging Face's) or "truncated_normal" (google-research/bert's).
        **kwargs: `keras.Model` arguments, such as `name`.

    Raises:
        UserInputError: a `dropout_rate` outside [0, 1), or an unknown `head_initializer`.
    """

    def __init__(
        self,
        encoder: BertEncoder,
        dropout_rate: float = 0.1,
        head_initializer: str = "normal",
        **kwargs,
    ):
        # The encoder's policy: `compile` then adds loss scaling to a mixed_float16 model.
        super().__init__(**{"dtype": encoder.dtype_policy, **kwargs})
        self.encoder = encoder
        self.dropout_rate = dropout_rate
        self.dropout = Dropout(dropout_rate, name="dropout")
        self.head_initializer = head_initializer

    def output_layer(self, units: int, name: str, use_bias: bool = True) -> keras.layers.Dense:
        """A task head's dense layer, initialised and typed like the encoder's layers.

        Args:
            units: the number of outputs.
            name: the layer's name, which checkpoints use.
            use_bias: whether the layer adds a bias.

        Returns:
            A new, unbuilt `keras.layers.Dense`.
        """
        return keras.layers.Dense(
            units,
            use_bias=use_bias,
            kernel_initializer=task_head_initializer(
                self.head_initializer, self.encoder.initializer_range
            ),
            dtype=self.encoder.dtype_policy,
            name=name,
        )

    dummy_batch_shape = (1,)  # the input dimensions before the sequence: [batch]

    def build_with_dummy_inputs(self) -> None:
        """Builds every weight by calling the model once on a `[*dummy_batch_shape, 2]` batch
        (two tokens: Keras warns about a softmax over a length-1 axis)."""
        ones = keras.ops.ones((*self.dummy_batch_shape, 2), "int32")
        self({name: ones for name in ENCODER_INPUTS})

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "dropout_rate": self.dropout_rate,
            "head_initializer": self.head_initializer,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config, encoder=keras.saving.deserialize_keras_object(config["encoder"]))
        return cls(**config)
