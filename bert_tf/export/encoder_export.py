"""`EncoderExport`: a TF-Hub-style BERT encoder SavedModel; `mlm` for a pretrained model."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.export.keras_tracking import KerasModelRef
from bert_tf.export.task_module import checked_ids, id_spec
from bert_tf.layers.positions import gather_positions
from bert_tf.models.bert_encoder import ENCODER_INPUTS, BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer

ENCODER_SPEC = id_spec()


def _float32(outputs):
    return tf.nest.map_structure(lambda t: tf.cast(t, tf.float32), outputs)


def _checked_positions(inputs: dict[str, tf.Tensor]) -> tf.Tensor:
    """`masked_lm_positions` `[batch, predictions]` behind asserts that each is a position of
    `input_word_ids`: a gather would otherwise fail unnamed, or, under XLA, clamp."""
    positions = inputs["masked_lm_positions"]
    seq_length = tf.shape(inputs["input_word_ids"])[-1]
    with tf.control_dependencies(
        [
            tf.debugging.assert_non_negative(positions, message="masked_lm_positions must be >= 0"),
            tf.debugging.assert_less(
                positions,
                seq_length,
                message="masked_lm_positions must be < the sequence length of input_word_ids",
            ),
        ]
    ):
        return tf.identity(positions)


class _MaskedLM(tf.Module):
    """`mlm(inputs + masked_lm_positions [batch, k])` -> `mlm_logits` `[batch, k, vocab]`."""

    def __init__(self, pretrainer: BertPretrainer):
        super().__init__()
        if not pretrainer.built:  # a new pretrainer's heads have no weights until built
            pretrainer.build_with_dummy_inputs()
        self._pretrainer = KerasModelRef(pretrainer)
        self.model_variables = [v.value for v in pretrainer.variables]

    @tf.function(
        autograph=False,
        input_signature=[
            {
                **ENCODER_SPEC,
                "masked_lm_positions": tf.TensorSpec(
                    [None, None], tf.int32, name="masked_lm_positions"
                ),
            }
        ],
    )
    def __call__(self, inputs):
        pretrainer = self._pretrainer.model
        encoder = pretrainer.encoder
        outputs = encoder(
            checked_ids({name: inputs[name] for name in ENCODER_INPUTS}, encoder.bert_config),
            training=False,
        )
        masked = gather_positions(outputs["sequence_output"], _checked_positions(inputs))
        logits = pretrainer.masked_lm_head(masked, encoder.word_embedding_matrix)
        return _float32(
            {
                "mlm_logits": logits,
                "pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"],
            }
        )


class EncoderExport(tf.train.Checkpoint):
    """The encoder inputs -> `pooled_output`, `sequence_output`, `encoder_outputs` (float32).

    Called as a function (`loaded(inputs, training=False)`) it returns `encoder_outputs`
    as a list of `[batch, seq, hidden]` tensors, as TF Hub's encoders do; the
    `serving_default` signature, whose outputs must be single tensors, stacks them to
    `[batch, num_hidden_layers, seq, hidden]`. Given a `BertPretrainer`, `mlm` adds
    the masked-LM logits at `masked_lm_positions`.

    It is a Reusable SavedModel (TF Hub's interface for fine-tuning): `__call__` takes
    `training` (dropout on or off), and `variables`, `trainable_variables` and
    `regularization_losses` are attributes, so `hub.KerasLayer(path, trainable=True)`
    trains the encoder. It records the encoder's config (`bert_config`, JSON) and, when
    given, `do_lower_case`, so that `--init_checkpoint` can start from it.
    A `tf.train.Checkpoint` rather than a `tf.Module`, which keeps the
    names `variables` and `trainable_variables` for properties of its own.

    Example:
    >>> encoder = BertEncoder.from_config_file("bert_config.json")
    >>> tf.saved_model.save(EncoderExport(encoder), "export/encoder")
    >>> loaded = tf.saved_model.load("export/encoder")
    >>> ids = tf.constant([[2, 17, 18, 3]])  # [CLS] hello world [SEP]
    >>> outputs = loaded({"input_word_ids": ids, "input_mask": tf.ones_like(ids),
    ...                   "input_type_ids": tf.zeros_like(ids)}, training=False)
    >>> outputs["pooled_output"].shape, len(outputs["encoder_outputs"])
    (TensorShape([1, 16]), 1)
    """

    def __init__(
        self,
        model: BertEncoder | BertPretrainer,
        vocab_file: str | None = None,
        do_lower_case: bool | None = None,
    ):
        super().__init__()
        encoder = model.encoder if isinstance(model, BertPretrainer) else model
        self.bert_config = tf.Variable(encoder.bert_config.to_json_string(), trainable=False)
        if do_lower_case is not None:  # as Model Garden's export records it
            self.do_lower_case = tf.Variable(do_lower_case, trainable=False)
        self._encoder = KerasModelRef(encoder)
        self.variables = [v.value for v in encoder.variables]  # the tf.Variables under Keras's
        self.trainable_variables = [v.value for v in encoder.trainable_variables]
        self.regularization_losses = []
        if isinstance(model, BertPretrainer):
            self.mlm = _MaskedLM(model)
        if vocab_file is not None:
            self.vocab_file = tf.saved_model.Asset(vocab_file)
        for training in (False, True):  # both go into the SavedModel
            self.__call__.get_concrete_function(ENCODER_SPEC, training=training)

    @tf.function(autograph=False)
    def __call__(self, inputs, training=False):
        encoder = self._encoder.model
        return _float32(encoder(checked_ids(inputs, encoder.bert_config), training=training))

    @tf.function(autograph=False, input_signature=[ENCODER_SPEC])
    def serve(self, inputs):
        outputs = self.__call__(inputs)
        return {
            "pooled_output": outputs["pooled_output"],  # [batch, hidden]
            "sequence_output": outputs["sequence_output"],  # [batch, seq, hidden]
            # [batch, layers, seq, hidden]
            "encoder_outputs": tf.stack(outputs["encoder_outputs"], axis=1),
        }
