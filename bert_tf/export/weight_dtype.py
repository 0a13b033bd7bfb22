"""`with_weights_in`: a copy of a model with its weights stored in its compute dtype, for export.

A mixed-precision model (`mixed_bfloat16`) keeps float32 weights and casts each one to
bfloat16 when a layer reads it, so its SavedModel casts all of BERT's weights on every
call. The copy holds them in bfloat16 already: half the bytes on disk and in memory,
and no cast. It computes what the mixed-precision model computes, since its LayerNorms
and attention softmax run in float32 either way.

Example:
>>> from bert_tf.models import BertClassifier
>>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
...                       num_attention_heads=2, intermediate_size=32)
>>> model = BertClassifier(encoder, num_classes=2)
>>> model.build_with_dummy_inputs()
>>> with_weights_in(model, "bfloat16").classifier.kernel.dtype
'bfloat16'
"""

from __future__ import annotations

from keras import ops

from bert_tf.errors import UserInputError
from bert_tf.models import BertEncoder
from bert_tf.training.runtime_choices import DTYPE_POLICIES


def with_weights_in(model, dtype: str):
    """A copy of `model` that stores its weights in `dtype` and computes in it (module docstring).

    Args:
        model: a `BertEncoder`, or a built task model or `BertPretrainer`.
        dtype: one of `DTYPE_POLICIES`, the scripts' `--dtype` values.

    Returns:
        The copy, with `model`'s values cast; `model` itself for "float32".

    Raises:
        UserInputError: an unknown `dtype`.
    """
    if dtype not in DTYPE_POLICIES:  # the --dtype values of every script
        raise UserInputError(f"`dtype`={dtype!r}: expected one of {', '.join(DTYPE_POLICIES)}")
    if dtype == "float32":
        return model
    encoder = model if isinstance(model, BertEncoder) else model.encoder
    copy = BertEncoder.from_config({**encoder.get_config(), "dtype": dtype})
    if model is not encoder:
        config = model.get_config()
        del config["encoder"]
        copy = type(model)(copy, **config)
        copy.build_with_dummy_inputs()
    if len(copy.weights) != len(model.weights):
        raise ValueError(
            f"with_weights_in: {model.name} has {len(model.weights)} weights of "
            f"{len(copy.weights)}: build it (build_with_dummy_inputs) first"
        )
    for target, source in zip(copy.weights, model.weights):
        if target.path != source.path:  # built in another order: not a copy of the same model
            raise ValueError(f"with_weights_in: {target.path} is not {source.path}")
        target.assign(ops.cast(source, target.dtype))
    return copy
