"""The flags of export_model.py.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.export.model_types import MODEL_TYPES
from bert_tf.shared_flags import SPAN_FLAGS, define_shared_flags

REQUIRED = ("model_type", "init_checkpoint", "vocab_file", "export_dir")


def define_export_flags() -> None:
    flags.DEFINE_enum(
        "model_type", None, list(MODEL_TYPES), "What to export; hub = preprocessing + encoder pair."
    )
    define_shared_flags(
        "init_checkpoint",
        "bert_config_file",
        "vocab_file",
        "do_lower_case",
        "export_dir",
        "max_seq_length",
        *SPAN_FLAGS,
        "jit_compile",
        "dtype",
    )
    flags.DEFINE_list(
        "labels",
        None,
        "Class names, in label-id order (classifier, token); default: the "
        "names stored with the checkpoint (a bert_tf fine-tuning run's labels.json, a "
        "Hugging Face id2label).",
    )
    flags.DEFINE_integer(
        "num_classes",
        None,
        "Classes; default: the checkpoint head's width (another number is an error).",
        lower_bound=1,
    )
    for name in REQUIRED:
        flags.mark_flag_as_required(name)
