"""Convert a BERT checkpoint in any supported format to google-research/bert's TF1 format or to bert_tf's.

    python -m bert_tf.convert --input PATH --output DIR [--to tf1|bert_tf] [--bert_config_file FILE]

`--input` is anything `bert_tf.checkpoints.load_checkpoint` reads (a TF1 `bert_model.ckpt`,
a Model Garden TF2 checkpoint, a Hugging Face directory, a bert_tf checkpoint or `.keras`
file). DIR then holds `bert_config.json`, `vocab.txt` (copied when the input directory has
one) and the checkpoint, to pass as `--bert_config_file`, `--vocab_file` and
`--init_checkpoint`: `DIR/bert_model.ckpt` (tf1, Google's names) or `DIR/ckpt` (bert_tf,
`tf.train.Checkpoint(model=BertPretrainer)`, or `encoder=` when the input has no
pretraining heads).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import tensorflow as tf

from bert_tf import io_utils
from bert_tf.checkpoints import load_checkpoint, resolve_bert_config, write_tf1_checkpoint
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.cli_errors import run_reporting_user_errors
from bert_tf.models import BertEncoder, BertPretrainer

PROGRAM = "python -m bert_tf.convert"
logger = logging.getLogger(__name__)


def convert(input_path: str, output_dir: str, to: str = "tf1", bert_config_file: str | None = None) -> str:
    """Converts the checkpoint at `input_path` into `output_dir`; returns the checkpoint prefix."""
    config = resolve_bert_config(bert_config_file, input_path, checkpoint_flag="input")
    pretrainer = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_checkpoint(input_path, pretrainer)

    tf.io.gfile.makedirs(output_dir)
    config.to_json_file(os.path.join(output_dir, "bert_config.json"))
    vocab = os.path.join(os.path.dirname(report.path), "vocab.txt")
    if tf.io.gfile.exists(vocab):
        with io_utils.atomic_output(os.path.join(output_dir, "vocab.txt")) as tmp:
            tf.io.gfile.copy(vocab, tmp, overwrite=True)

    if to == "tf1":
        # Exactly what the input had, task heads included.
        return write_tf1_checkpoint(pretrainer, os.path.join(output_dir, "bert_model.ckpt"),
                                    heads=report.heads, names=report.loaded)
    has_heads = not any(name.startswith("cls/") for name in report.missing)
    model = pretrainer if has_heads else pretrainer.encoder
    initialised = [name for name in tf1_variables(model) if name not in report.loaded]
    dropped = [name for name in report.loaded if name.startswith("cls/") and not has_heads]
    if initialised or dropped or report.heads:
        logger.warning("bert_tf output: written as initialised: %s; not written: %s",
                       ", ".join(initialised) or "none",
                       ", ".join(dropped + [f"{role} head" for role in report.heads]) or "none")
    checkpoint = tf.train.Checkpoint(**{"model" if has_heads else "encoder": model})
    return checkpoint.write(os.path.join(output_dir, "ckpt"))


def _main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="checkpoint prefix, file or directory")
    parser.add_argument("--output", required=True, help="output directory")
    parser.add_argument("--to", choices=("tf1", "bert_tf"), default="tf1", help="output format")
    parser.add_argument("--bert_config_file", help="config of the input, if none lies beside it")
    args = parser.parse_args(argv[1:])
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    prefix = convert(args.input, args.output, args.to, args.bert_config_file)
    vocab = os.path.join(args.output, "vocab.txt")
    print(f"--init_checkpoint={prefix} --bert_config_file={os.path.join(args.output, 'bert_config.json')}"
          + (f" --vocab_file={vocab}" if tf.io.gfile.exists(vocab) else ""))


def main(argv: list[str]) -> None:
    """Runs the converter on `argv` (`argv[0]` is the program); bad input ends in one line, exit 1."""
    run_reporting_user_errors(_main, argv)


if __name__ == "__main__":
    main([PROGRAM, *sys.argv[1:]])
