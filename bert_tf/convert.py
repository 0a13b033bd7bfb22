"""Convert a BERT checkpoint in any supported format to google-research/bert's TF1 format or to bert_tf's.

    python -m bert_tf.convert --input PATH --output DIR [--to tf1|bert_tf] [--bert_config_file FILE]

`--input` is anything `bert_tf.checkpoints.load_checkpoint` reads (a TF1 `bert_model.ckpt`,
a Model Garden TF2 checkpoint, a Hugging Face directory, a bert_tf checkpoint or `.keras`
file). DIR then holds `bert_config.json`, `vocab.txt` (copied when the input directory has
one) and the checkpoint, to pass as `--bert_config_file`, `--vocab_file` and
`--init_checkpoint`: `DIR/bert_model.ckpt` (tf1, Google's names) or `DIR/ckpt` (bert_tf,
`tf.train.Checkpoint(model=BertPretrainer)`, or `encoder=` when the input has no
pretraining heads).

The TF1 `bert_config.json` names `hidden_act` as google-research/bert's
`modeling.get_activation` reads it (see `tf1_config`): its "gelu" is the tanh approximation,
bert_tf's (and Hugging Face's) the exact erf form.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys

import tensorflow as tf

from bert_tf import io_utils
from bert_tf.bert_config import BertConfig, ConfigError
from bert_tf.checkpoints import CheckpointFormat, load_checkpoint, resolve_bert_config, write_tf1_checkpoint
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.cli_errors import run_reporting_user_errors
from bert_tf.models import BertEncoder, BertPretrainer

PROGRAM = "python -m bert_tf.convert"
logger = logging.getLogger(__name__)


# bert_tf's `hidden_act` -> google-research/bert's: its `modeling.get_activation` knows only
# linear, relu, gelu (which it computes as the tanh approximation) and tanh.
_TF1_ACTIVATIONS = {"gelu": "gelu", "gelu_approximate": "gelu", "gelu_new": "gelu",
                    "gelu_pytorch_tanh": "gelu", "relu": "relu", "tanh": "tanh", "linear": "linear"}
_TANH_GELUS = ("gelu_approximate", "gelu_new", "gelu_pytorch_tanh")
_GELU_FORMS_DIFFER_BY = "4.7e-4"  # max |exact erf GELU - its tanh approximation|, at x = 2.7
# Formats whose config is google-research/bert's own, "gelu" meaning the tanh approximation already.
_GOOGLE_FORMATS = (CheckpointFormat.TF1, CheckpointFormat.MODEL_GARDEN)


def tf1_config(config: BertConfig, input_format: str) -> BertConfig:
    """`config` with `hidden_act` as google-research/bert names it, for a TF1 output.

    - gelu_new, gelu_pytorch_tanh, gelu_approximate (the tanh approximation) become
      "gelu", exact for google-research/bert; bert_tf reads that "gelu" as the exact erf
      form, so a warning states the difference (at most 4.7e-4) and that `--to bert_tf`
      keeps the name.
    - "gelu" (the exact erf form) stays "gelu", exact for bert_tf; google-research/bert
      computes its tanh approximation, with a warning giving the difference, unless the
      input is a TF1 or Model Garden checkpoint, whose "gelu" is that already.
    - relu, tanh and linear are the same in both.
    - silu and swish, which google-research/bert cannot compute, raise `ConfigError`.
    """
    name = config.hidden_act
    if name not in _TF1_ACTIVATIONS:
        raise ConfigError(f"--to=tf1: hidden_act {name!r} has no google-research/bert name (its "
                          "modeling.get_activation knows linear, relu, gelu, tanh): use --to bert_tf")
    if name in _TANH_GELUS:
        logger.warning("hidden_act %r (the tanh approximation of the GELU) written as "
                       "google-research/bert's 'gelu', which computes it exactly; bert_tf reads 'gelu' as "
                       "the exact erf GELU, at most %s apart: --to bert_tf keeps %r",
                       name, _GELU_FORMS_DIFFER_BY, name)
    elif name == "gelu" and input_format not in _GOOGLE_FORMATS:
        logger.warning("hidden_act 'gelu' (the exact erf GELU) written as google-research/bert's 'gelu', "
                       "which computes its tanh approximation, at most %s apart", _GELU_FORMS_DIFFER_BY)
    return dataclasses.replace(config, hidden_act=_TF1_ACTIVATIONS[name])


def convert(input_path: str, output_dir: str, to: str = "tf1", bert_config_file: str | None = None) -> str:
    """Converts the checkpoint at `input_path` into `output_dir`; returns the checkpoint prefix.

    Raises `ConfigError` for a TF1 output whose `hidden_act` google-research/bert cannot
    compute (see `tf1_config`), before writing anything.
    """
    config = resolve_bert_config(bert_config_file, input_path, checkpoint_flag="input")
    pretrainer = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_checkpoint(input_path, pretrainer)
    if to == "tf1":
        config = tf1_config(config, report.format)

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
