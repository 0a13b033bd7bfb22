"""`TaskExport`: what all exported task models share: the model, the tokenizer, the vocab asset."""

from __future__ import annotations

import keras
import tensorflow as tf

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints.task_heads import task_model_type
from bert_tf.errors import UserInputError
from bert_tf.export.keras_tracking import KerasModelRef
from bert_tf.export.tf_example_inputs import EXAMPLES_SPEC
from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


def id_spec(rank: int = 2) -> dict[str, tf.TensorSpec]:
    """The three int32 id inputs, `[batch, seq]` (or `[batch, choices, seq]` for rank 3)."""
    return {name: tf.TensorSpec([None] * rank, tf.int32, name=name) for name in ENCODER_INPUTS}


def text_spec(name: str, rank: int = 1) -> tf.TensorSpec:
    """A string input named `name`: `[batch]`, or `[batch, choices]` for rank 2."""
    return tf.TensorSpec([None] * rank, tf.string, name=name)


def checked_ids(inputs: dict[str, tf.Tensor], config: BertConfig) -> dict[str, tf.Tensor]:
    """`inputs` behind asserts that the three have one shape and that the model has an
    embedding for every id and position.

    Without them a bad id would not fail: Keras's `take` wraps negative ids around, and
    under XLA a gather clamps the others to the last row, so ids from another vocab would
    get a confident answer. Run them outside an XLA-compiled function, which drops asserts.
    """
    word_ids, type_ids = inputs["input_word_ids"], inputs["input_type_ids"]
    checks = [
        tf.debugging.assert_equal(
            tf.shape(inputs[name]),
            tf.shape(word_ids),
            message=f"{name} must have the shape of input_word_ids",
        )
        for name in ("input_mask", "input_type_ids")
    ] + [
        tf.debugging.assert_non_negative(word_ids, message="input_word_ids must be >= 0"),
        tf.debugging.assert_less(
            word_ids,
            config.vocab_size,
            message=f"input_word_ids must be < the vocab size, {config.vocab_size}",
        ),
        tf.debugging.assert_non_negative(type_ids, message="input_type_ids must be >= 0"),
        tf.debugging.assert_less(
            type_ids,
            config.type_vocab_size,
            message=f"input_type_ids must be < type_vocab_size, {config.type_vocab_size}",
        ),
        tf.debugging.assert_less_equal(
            tf.shape(word_ids)[-1],
            config.max_position_embeddings,
            message=f"the sequence must be at most max_position_embeddings, "
            f"{config.max_position_embeddings}, long",
        ),
        tf.debugging.assert_positive(
            tf.shape(word_ids)[-1],  # the pooler reads position 0, [CLS]
            message="input_word_ids must have a sequence length of at least 1",
        ),
    ]
    with tf.control_dependencies(checks):
        return {name: tf.identity(tensor) for name, tensor in inputs.items()}


def label_names(labels, num_classes: int, head: str) -> tf.Tensor:
    """`labels` (default "0", "1", ...) as a string tensor `[num_classes]`; one name per class."""
    names = [str(i) for i in range(num_classes)] if labels is None else [str(x) for x in labels]
    if len(names) != num_classes:
        raise UserInputError(
            f"`labels`: {len(names)} given for a {head} with {num_classes} classes"
        )
    if len(set(names)) != len(names):
        raise UserInputError(f"`labels`: {','.join(names)} names a class twice")
    return tf.constant(names)


def check_packable(seq_length: int, texts: int, model_type: str) -> None:
    """Raises `UserInputError` naming `max_seq_length` if `seq_length` cannot pack `texts` texts
    (1 or 2) into one sequence: `BertTokenizer.pack_inputs` needs [CLS], a [SEP] per text and one
    token."""
    shortest = texts + 2
    if seq_length < shortest:
        raise UserInputError(
            f"`max_seq_length`={seq_length} is too short for "
            f"`model_type`={model_type}: it packs "
            f"{'one text' if texts == 1 else 'two texts'} into a sequence, which "
            f"needs at least {shortest} ([CLS], a [SEP] per text and one token)"
        )


def with_batch_checked(first: tf.Tensor, batch_size: tf.Tensor, message: str) -> tf.Tensor:
    """`first` behind an assert that its batch size is `batch_size` (another input's).

    Packing would broadcast a batch of 1 against the other input; every op on both inputs
    comes after this check, so `message` is the error that unequal batches get.
    """
    with tf.control_dependencies(
        [tf.debugging.assert_equal(tf.shape(first)[0], batch_size, message=message)]
    ):
        return tf.identity(first)


class _SharedTraces:
    """The tokenizer's `tokenize` and an export's `serve` as `tf.function`s for
    its signatures to call: each is traced once per input shape, not once per
    signature that calls it (their graphs are most of an export's tracing). A
    plain object: SavedModel tracking saves them only inside the signatures.
    """

    def __init__(self, tokenize, serve):
        self.tokenize = tf.function(tokenize, autograph=False)
        self.serve = tf.function(serve, autograph=False)


class TaskExport(tf.Module):
    """Base of the per-head exports: `serving_default` on ids, plus text signatures in subclasses.

    Subclasses define `serve(inputs)` (the ids signature, a plain method) and
    `text_signatures()`: name -> (method, input specs), whose methods tokenize and serve
    through `self._shared` (`_SharedTraces`). They may define `example_signatures()`:
    name -> (method, `SignatureDef.method_name`), methods on serialized `tf.Example`s for
    TF Serving's Classify or Regress API (`tf_example_inputs`). Text signatures
    truncate to `seq_length` tokens and pad only to the batch's longest packed
    row. The signature functions are traced once, here, and are not attributes
    of the module, so that `tf.saved_model.save` does not trace them again.
    """

    texts_packed = 2  # the most texts a text signature packs into one sequence

    def __init__(self, model: keras.Model, tokenizer: BertTokenizer, seq_length: int):
        super().__init__()
        check_packable(seq_length, self.texts_packed, task_model_type(model))
        self._model = KerasModelRef(model)
        self.model_variables = [v.value for v in model.variables]  # the tf.Variables
        self._tokenizer = tokenizer
        self._shared = _SharedTraces(tokenizer.tokenize, self.serve)
        self.seq_length = seq_length
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)

    def signatures(self, jit_compile: bool = False) -> dict:
        """Signature name -> concrete function, for `tf.saved_model.save`.

        `jit_compile` compiles the model behind `serving_default` with XLA (it fuses
        the elementwise work around the matmuls), but TF Serving then needs
        `--xla_cpu_compilation_enabled`. Its ids are checked before (`checked_ids`).
        The text signatures stay uncompiled: they pad to each batch's own length, and
        XLA would compile every new shape.
        """
        signatures = {
            name: tf.function(method, input_signature=specs, autograph=False)
            for name, (method, specs) in self.text_signatures().items()
        }
        signatures.update(
            {
                name: tf.function(method, input_signature=[EXAMPLES_SPEC], autograph=False)
                for name, (method, _) in self.example_signatures().items()
            }
        )
        serve = (
            tf.function(self.serve, autograph=False, jit_compile=True)
            if jit_compile
            else self._shared.serve
        )
        config = self._model.model.encoder.bert_config
        signatures["serving_default"] = tf.function(
            lambda inputs: serve(checked_ids(inputs, config)),
            input_signature=[self.id_spec()],
            autograph=False,
        )
        return {name: function.get_concrete_function() for name, function in signatures.items()}

    def method_names(self) -> dict[str, str]:
        """Signature -> its `SignatureDef.method_name` where not `tensorflow/serving/predict`."""
        return {name: method_name for name, (_, method_name) in self.example_signatures().items()}

    def id_spec(self) -> dict[str, tf.TensorSpec]:
        return id_spec()

    def serve(self, inputs) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def text_signatures(self) -> dict:
        raise NotImplementedError

    def example_signatures(self) -> dict:
        return {}

    def _logits(self, inputs) -> dict[str, tf.Tensor]:
        return self._model.model({name: inputs[name] for name in ENCODER_INPUTS}, training=False)

    def _pack(self, segments) -> dict[str, tf.Tensor]:
        return self._tokenizer.pack_inputs(segments, self.seq_length, pad_to_seq_length=False)
