"""absl flags shared by every run script (distribution, TPU, precision), and flags read as options.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

import dataclasses

from absl import flags

# The values of --distribution_strategy and --dtype (with the Keras policy of each), here
# rather than in `distribution`, so that a script defines its flags without importing TensorFlow.
STRATEGIES = ("tpu", "mirrored", "multi_worker_mirrored", "one_device", "default")
DTYPE_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}


def define_runtime_flags() -> None:
    """Defines google-research/bert's TPU flags (--use_tpu, --tpu_name, --master,
    --num_tpu_cores...) plus --distribution_strategy, --dtype, --jit_compile."""
    flags.DEFINE_enum("distribution_strategy", "default", STRATEGIES,
                      "tf.distribute strategy. --tpu implies tpu.")
    flags.DEFINE_bool("use_tpu", False,
                      "Whether to use a TPU (needs --tpu_name or --master, which imply it). "
                      "--use_tpu=false, given explicitly, ignores them (google-research/bert's behaviour).")
    flags.DEFINE_string("tpu_name", None,
                        "The TPU to use: local (the TPUs of this TPU VM), a Cloud TPU name (a pod slice's "
                        "hosts are looked up in --tpu_zone/--gcp_project), or grpc:// addresses, one per "
                        "host, comma-separated.")
    flags.DEFINE_alias("tpu", "tpu_name")
    flags.DEFINE_string("master", None,
                        "google-research/bert's TensorFlow master: the TPU's grpc:// address "
                        "(grpc://10.0.0.2:8470). Used as --tpu_name when that is unset (a --tpu_name "
                        "wins, as in google's scripts), so it too implies the tpu strategy.")
    flags.DEFINE_integer("num_tpu_cores", None,
                         "google-research/bert's total number of TPU cores. Only used with a TPU, which the "
                         "strategy uses whole: a number other than its cores is refused. Default: not checked.",
                         lower_bound=1)
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU (used to resolve --tpu_name; default: "
                        "this VM's).")
    flags.DEFINE_string("gcp_project", None, "GCP project of the Cloud TPU (used to resolve --tpu_name; "
                        "default: this VM's).")
    flags.DEFINE_float("tpu_timeout", 120.0, "Seconds to wait for the TPU before failing.")
    flags.DEFINE_enum("dtype", "float32", list(DTYPE_POLICIES),
                      "Compute precision: a Keras mixed-precision policy for bfloat16 and float16 "
                      "(float16 adds dynamic loss scaling).")
    flags.DEFINE_bool("jit_compile", False, "Compile the train step with XLA (TPUs always do).")


def options_from_flags(options_class, flag_values: flags.FlagValues):
    """An options dataclass filled from the flags of its fields' names.

    A field without a flag of its name (`verbose`) keeps its default.
    """
    return options_class(**{field.name: flag_values[field.name].value
                            for field in dataclasses.fields(options_class) if field.name in flag_values})
