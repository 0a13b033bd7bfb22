"""absl flags shared by every run script (distribution, TPU, precision), and flags read into options."""

from __future__ import annotations

import dataclasses

import tensorflow as tf
from absl import flags, logging

from bert_tf.training import distribution


def define_runtime_flags() -> None:
    """Defines google-research/bert's TPU flags (--use_tpu, --tpu_name, --master, --num_tpu_cores...)
    plus --distribution_strategy, --dtype, --jit_compile."""
    flags.DEFINE_enum("distribution_strategy", "default", distribution.STRATEGIES,
                      "tf.distribute strategy. --tpu implies tpu.")
    flags.DEFINE_bool("use_tpu", False,
                      "Whether to use a TPU (needs --tpu_name or --master, which imply it). "
                      "--use_tpu=false, given explicitly, ignores them (google-research/bert's behaviour).")
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use: a name, or a grpc:// address.")
    flags.DEFINE_alias("tpu", "tpu_name")
    flags.DEFINE_string("master", None,
                        "google-research/bert's TensorFlow master: the TPU's grpc:// address "
                        "(grpc://10.0.0.2:8470). Used as --tpu_name when that is unset (a --tpu_name "
                        "wins, as in google's scripts), so it too implies the tpu strategy.")
    flags.DEFINE_integer("num_tpu_cores", None,
                         "google-research/bert's total number of TPU cores. Only used with a TPU, which the "
                         "strategy uses whole: a number other than its cores is refused. Default: not checked.",
                         lower_bound=1)
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU (used to resolve --tpu_name).")
    flags.DEFINE_string("gcp_project", None, "GCP project of the Cloud TPU (used to resolve --tpu_name).")
    flags.DEFINE_float("tpu_timeout", 120.0, "Seconds to wait for the TPU before failing.")
    flags.DEFINE_enum("dtype", "float32", list(distribution.DTYPE_POLICIES),
                      "Compute precision: a Keras mixed-precision policy for bfloat16 and float16 "
                      "(float16 adds dynamic loss scaling).")
    flags.DEFINE_bool("jit_compile", False, "Compile the train step with XLA (TPUs always do).")


def strategy_from_flags(flag_values: flags.FlagValues):
    """Sets the precision policy and builds the strategy the runtime flags ask for.

    --tpu_name (or --master) implies the TPU unless --use_tpu=false is given explicitly.
    """
    tpu_flag = "tpu" if flag_values.tpu_name or not flag_values.master else "master"
    tpu = flag_values[tpu_flag].value
    if tpu and flag_values["use_tpu"].present and not flag_values.use_tpu:  # as google-research/bert: no TPU
        logging.warning("--use_tpu=false: --%s=%s is ignored", tpu_flag, tpu)
        tpu = None
    if flag_values.use_tpu and not tpu:
        raise flags.ValidationError("--use_tpu needs --tpu_name (or --tpu, or --master)")
    distribution.set_precision(flag_values.dtype)
    strategy = distribution.create_strategy(
        flag_values.distribution_strategy, tpu=tpu, tpu_zone=flag_values.tpu_zone,
        gcp_project=flag_values.gcp_project, tpu_timeout_s=flag_values.tpu_timeout, tpu_flag=tpu_flag)
    if isinstance(strategy, tf.distribute.TPUStrategy):
        distribution.check_num_tpu_cores(flag_values.num_tpu_cores, strategy.num_replicas_in_sync)
    logging.info("Strategy %s with %d replicas", type(strategy).__name__, strategy.num_replicas_in_sync)
    return strategy


def options_from_flags(options_class, flag_values: flags.FlagValues):
    """An options dataclass filled from the flags of its fields' names.

    A field without a flag of its name (`verbose`) keeps its default.
    """
    return options_class(**{field.name: flag_values[field.name].value
                            for field in dataclasses.fields(options_class) if field.name in flag_values})
