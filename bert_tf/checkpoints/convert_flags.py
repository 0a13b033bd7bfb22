"""The flags of convert_checkpoint.py.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

REQUIRED = ("input_checkpoint", "output_dir")


def define_convert_flags() -> None:
    flags.DEFINE_string("input_checkpoint", None, "The checkpoint prefix, file or directory (TF1, Model Garden, "
                        "Hugging Face, bert_tf).")
    flags.DEFINE_string("output_dir", None, "Where bert_config.json, vocab.txt and the checkpoint go: a new "
                        "directory, or an earlier conversion's, which is replaced.")
    flags.DEFINE_enum("to", "tf1", ["tf1", "bert_tf"], "Output format: google-research/bert's TF1 names "
                      "(bert_model.ckpt) or bert_tf's tf.train.Checkpoint (ckpt).")
    flags.DEFINE_string("bert_config_file", None, "bert_config.json of the input; default: the one stored "
                        "with the checkpoint.")
    for name in REQUIRED:
        flags.mark_flag_as_required(name)
