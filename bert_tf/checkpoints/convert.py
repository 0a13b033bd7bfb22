"""Convert a BERT checkpoint in any supported format to google-research/bert's TF1 format or to bert_tf's.

The logic of `convert_checkpoint.py` (its flags and main are in `convert_cli.py`). The input
is anything `load_checkpoint` reads (a TF1 `bert_model.ckpt`, a Model Garden TF2
checkpoint, a Hugging Face directory, a bert_tf checkpoint or `.keras` file). The output
directory then holds `bert_config.json`, `vocab.txt` (copied when the input directory has
one) and the checkpoint, to pass as `--bert_config_file`, `--vocab_file` and
`--init_checkpoint`: `DIR/bert_model.ckpt` (tf1, Google's names) or `DIR/ckpt` (bert_tf,
`tf.train.Checkpoint(model=BertPretrainer)`, or `encoder=` when the input has no
pretraining heads).

The TF1 `bert_config.json` names `hidden_act` as google-research/bert's
`modeling.get_activation` reads it (see `tf1_config`): its "gelu" is the tanh approximation,
bert_tf's (and Hugging Face's) the exact erf form.
"""

from __future__ import annotations

import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.bert_config import BertConfig, ConfigError
from bert_tf.checkpoints.checkpoint_flags import resolve_bert_config
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.loader import load_checkpoint
from bert_tf.checkpoints.tf1_checkpoint import write_tf1_checkpoint
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.models import BertEncoder, BertPretrainer


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
        logging.warning("hidden_act %r (the tanh approximation of the GELU) written as "
                        "google-research/bert's 'gelu', which computes it exactly; bert_tf reads 'gelu' as "
                        "the exact erf GELU, at most %s apart: --to bert_tf keeps %r",
                        name, _GELU_FORMS_DIFFER_BY, name)
    elif name == "gelu" and input_format not in _GOOGLE_FORMATS:
        logging.warning("hidden_act 'gelu' (the exact erf GELU) written as google-research/bert's 'gelu', "
                        "which computes its tanh approximation, at most %s apart", _GELU_FORMS_DIFFER_BY)
    return dataclasses.replace(config, hidden_act=_TF1_ACTIVATIONS[name])


def convert(input_checkpoint: str, output_dir: str, to: str = "tf1", bert_config_file: str | None = None) -> str:
    """Converts the checkpoint at `input_checkpoint` into `output_dir`; returns the checkpoint prefix.

    Raises `ConfigError` for a TF1 output whose `hidden_act` google-research/bert cannot
    compute (see `tf1_config`), before writing anything.
    """
    config = resolve_bert_config(bert_config_file, input_checkpoint, checkpoint_flag="input_checkpoint")
    pretrainer = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_checkpoint(input_checkpoint, pretrainer)
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
        logging.warning("bert_tf output: written as initialised: %s; not written: %s",
                        ", ".join(initialised) or "none",
                        ", ".join(dropped + [f"{role} head" for role in report.heads]) or "none")
    checkpoint = tf.train.Checkpoint(**{"model" if has_heads else "encoder": model})
    return checkpoint.write(os.path.join(output_dir, "ckpt"))
