"""`convert_checkpoint.py`'s flags and main: a checkpoint in any format to google-research/bert's TF1 or bert_tf's."""

from __future__ import annotations

import os

import tensorflow as tf
from absl import flags

from bert_tf.checkpoints.convert import convert
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors

FLAGS = flags.FLAGS
REQUIRED = ("input_checkpoint", "output_dir")


def define_flags() -> None:
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


def _main(argv) -> None:
    reject_arguments(argv)
    prefix = convert(FLAGS.input_checkpoint, FLAGS.output_dir, FLAGS.to, FLAGS.bert_config_file)
    vocab = os.path.join(FLAGS.output_dir, "vocab.txt")
    print(f"--init_checkpoint={prefix} --bert_config_file={os.path.join(FLAGS.output_dir, 'bert_config.json')}"
          + (f" --vocab_file={vocab}" if tf.io.gfile.exists(vocab) else ""))


def main(argv) -> None:
    run_reporting_user_errors(_main, argv)
