"""`convert_checkpoint.py`'s main: any checkpoint to google-research/bert's TF1 or bert_tf's."""

from __future__ import annotations

import os

import tensorflow as tf
from absl import flags

from bert_tf.bert_config import CONFIG_FILE
from bert_tf.checkpoints.convert import convert
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors

FLAGS = flags.FLAGS


def _main(argv) -> None:
    reject_arguments(argv)
    prefix = convert(FLAGS.input_checkpoint, FLAGS.output_dir, FLAGS.to, FLAGS.bert_config_file)
    vocab = os.path.join(FLAGS.output_dir, "vocab.txt")
    print(
        f"--init_checkpoint={prefix} "
        f"--bert_config_file={os.path.join(FLAGS.output_dir, CONFIG_FILE)}"
        + (f" --vocab_file={vocab}" if tf.io.gfile.exists(vocab) else "")
    )


def main(argv) -> None:
    run_reporting_user_errors(_main, argv)
