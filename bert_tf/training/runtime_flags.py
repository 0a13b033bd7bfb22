"""The flags every run script takes (distribution, TPU, precision), and flags read into options.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

import dataclasses

from absl import flags

from bert_tf.shared_flags import TPU_FLAGS, define_shared_flags


def define_runtime_flags() -> None:
    """Defines google-research/bert's TPU flags (--use_tpu, --tpu_name, --master,
    --num_tpu_cores...) plus --distribution_strategy, --dtype, --jit_compile
    (`bert_tf.shared_flags`)."""
    define_shared_flags("distribution_strategy", *TPU_FLAGS, "dtype", "jit_compile")
    flags.DEFINE_alias("tpu", "tpu_name")


def options_from_flags(options_class, flag_values: flags.FlagValues):
    """An options dataclass filled from the flags of its fields' names.

    A field without a flag of its name (`verbose`) keeps its default.
    """
    return options_class(
        **{
            field.name: flag_values[field.name].value
            for field in dataclasses.fields(options_class)
            if field.name in flag_values
        }
    )
