"""The flags of convert_checkpoint.py.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.shared_flags import define_shared_flags

REQUIRED = ("input_checkpoint", "output_dir")


def define_convert_flags() -> None:
    flags.DEFINE_string(
        "input_checkpoint",
        None,
        "The checkpoint prefix, file or directory (TF1, Model Garden, Hugging Face, bert_tf).",
    )
    define_shared_flags("output_dir", "bert_config_file")
    flags.DEFINE_enum(
        "to",
        "tf1",
        ["tf1", "bert_tf"],
        "Output format: google-research/bert's TF1 names "
        "(bert_model.ckpt) or bert_tf's tf.train.Checkpoint (ckpt).",
    )
    for name in REQUIRED:
        flags.mark_flag_as_required(name)
