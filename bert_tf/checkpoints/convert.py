"""Convert a checkpoint of any supported format to google-research/bert's TF1 format or bert_tf's.

The logic of `convert_checkpoint.py` (its flags are in `convert_flags.py`, its main in
`convert_cli.py`). The input is anything `load_checkpoint` reads (a TF1 `bert_model.ckpt`,
a Model Garden TF2 checkpoint, a Hugging Face directory, a bert_tf checkpoint or `.keras`
file, a TF Hub encoder SavedModel). The output directory then holds `bert_config.json`,
`vocab.txt` (copied when the input directory, or the SavedModel's assets, has one) and the
checkpoint, to pass as `--bert_config_file`, `--vocab_file` and `--init_checkpoint`:
`DIR/bert_model.ckpt` (tf1, Google's names) or `DIR/ckpt` (bert_tf,
`tf.train.Checkpoint(model=BertPretrainer)`, without the next-sentence head when the input has
none, or `encoder=` when the input has no pretraining heads). The directory is written whole,
then renamed into place; a new one, or an earlier conversion's, is replaced.

The TF1 `bert_config.json` names `hidden_act` as google-research/bert's
`modeling.get_activation` reads it (see `tf1_config`): its "gelu" is the tanh approximation,
bert_tf's (and Hugging Face's) the exact erf form.
"""

from __future__ import annotations

import dataclasses
import os
import re

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.bert_config import CONFIG_FILE, BertConfig, ConfigError
from bert_tf.checkpoints.bert_tf_checkpoint import TF1_ROLES
from bert_tf.checkpoints.checkpoint_weights import named_setting
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.hub_saved_model import hub_vocab_file
from bert_tf.checkpoints.loader import LoadReport, load_checkpoint
from bert_tf.checkpoints.starting_checkpoint import (
    resolve_bert_config,
    resolve_starting_checkpoint,
)
from bert_tf.checkpoints.task_heads import checkpoint_heads
from bert_tf.checkpoints.tf1_checkpoint import write_tf1_checkpoint
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.errors import UserInputError
from bert_tf.models import BertEncoder, BertPretrainer

# bert_tf's `hidden_act` -> google-research/bert's: its `modeling.get_activation` knows only
# linear, relu, gelu (which it computes as the tanh approximation) and tanh.
_TF1_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_approximate": "gelu",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
_TANH_GELUS = ("gelu_approximate", "gelu_new", "gelu_pytorch_tanh")
_GELU_FORMS_DIFFER_BY = "4.7e-4"  # max |exact erf GELU - its tanh approximation|, at x = 2.7
# Formats whose config is google-research/bert's own, "gelu" meaning the tanh approximation already.
_GOOGLE_FORMATS = (CheckpointFormat.TF1, CheckpointFormat.MODEL_GARDEN)
# What a conversion writes into its output directory.
_OUTPUT_FILE = re.compile(
    r"bert_config\.json|vocab\.txt|(bert_model\.ckpt|ckpt)\.(index|data-\d{5}-of-\d{5})"
)


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
        raise ConfigError(
            f"`to`=tf1: hidden_act {name!r} has no google-research/bert name (its "
            "modeling.get_activation knows linear, relu, gelu, tanh): use `to` "
            "bert_tf"
        )
    if name in _TANH_GELUS:
        logging.warning(
            "hidden_act %r (the tanh approximation of the GELU) written as "
            "google-research/bert's 'gelu', which computes it exactly; bert_tf reads 'gelu' as "
            "the exact erf GELU, at most %s apart: --to bert_tf keeps %r",
            name,
            _GELU_FORMS_DIFFER_BY,
            name,
        )
    elif name == "gelu" and input_format not in _GOOGLE_FORMATS:
        logging.warning(
            "hidden_act 'gelu' (the exact erf GELU) written as google-research/bert's 'gelu', "
            "which computes its tanh approximation, at most %s apart",
            _GELU_FORMS_DIFFER_BY,
        )
    return dataclasses.replace(config, hidden_act=_TF1_ACTIVATIONS[name])


def convert(
    input_checkpoint: str, output_dir: str, to: str = "tf1", bert_config_file: str | None = None
) -> str:
    """Converts the checkpoint at `input_checkpoint`
    into `output_dir`; returns the checkpoint prefix.

    The output is written to a temporary directory beside `output_dir`, then renamed onto it
    at once: a failed conversion leaves no `bert_config.json` without its checkpoint. An
    `output_dir` holding the input, or files a conversion does not write, is refused
    (`_check_output_dir`), as is a TF1 output whose `hidden_act` google-research/bert cannot
    compute (see `tf1_config`), both before writing anything.
    """
    with named_setting("input_checkpoint"):
        checkpoint = resolve_starting_checkpoint(input_checkpoint)
    config = resolve_bert_config(bert_config_file, checkpoint, setting="input_checkpoint")
    pretrainer = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_checkpoint(checkpoint, pretrainer)
    missing_heads = {name.split("/")[1] for name in report.missing if name.startswith("cls/")}
    if missing_heads == {"seq_relationship"}:  # pretrained without next-sentence prediction
        pretrainer = BertPretrainer(
            BertEncoder.from_bert_config(config), next_sentence_prediction=False
        )
        report = load_checkpoint(checkpoint, pretrainer)
    if to == "tf1":
        config = tf1_config(config, report.format)
    elif config.hidden_act == "gelu" and report.format in _GOOGLE_FORMATS:
        logging.warning(
            "hidden_act 'gelu' of a %s checkpoint (the tanh approximation of the GELU) is read by "
            "bert_tf as the exact erf GELU, at most %s apart: set 'gelu_approximate' in the "
            "output's bert_config.json to compute the tanh form",
            report.format,
            _GELU_FORMS_DIFFER_BY,
        )
    output_dir = os.fspath(output_dir).rstrip("/")
    _check_output_dir(output_dir, report.path)
    with io_utils.atomic_directory(output_dir) as tmp:
        config.to_json_file(os.path.join(tmp, CONFIG_FILE))
        vocab = (
            hub_vocab_file(report.path)
            if report.format == CheckpointFormat.TF_HUB.value
            else os.path.join(os.path.dirname(report.path), "vocab.txt")
        )
        if vocab and tf.io.gfile.exists(vocab):
            tf.io.gfile.copy(vocab, os.path.join(tmp, "vocab.txt"))
        prefix = (
            _write_tf1(pretrainer, report, tmp)
            if to == "tf1"
            else _write_bert_tf(pretrainer, report, tmp)
        )
    return os.path.join(output_dir, os.path.basename(prefix))


def _check_output_dir(output_dir: str, input_location: str) -> None:
    """Raises ValueError naming `--output_dir` unless it is absent,
    or a directory holding only what a conversion writes and not the
    input `input_location`: the conversion replaces the directory."""
    if not tf.io.gfile.exists(output_dir):
        return
    if not tf.io.gfile.isdir(output_dir):
        raise UserInputError(f"`output_dir`={output_dir}: is a file, not a directory")
    if io_utils.is_within(input_location, output_dir):
        raise UserInputError(
            f"`output_dir`={output_dir}: holds the input checkpoint, which the "
            "conversion would replace; choose another directory"
        )
    others = sorted(
        name for name in tf.io.gfile.listdir(output_dir) if not _OUTPUT_FILE.fullmatch(name)
    )
    if others:
        raise UserInputError(
            f"`output_dir`={output_dir}: holds files a conversion does not write "
            f"({', '.join(name.rstrip('/') for name in others)}), which it would "
            "replace; choose an empty or new directory"
        )


def _write_tf1(pretrainer: BertPretrainer, report: LoadReport, output_dir: str) -> str:
    """Exactly what the input had, with its sentence-classifier or span head; warns that class names
    are not carried and that a token or multiple-choice head, which google-research/bert has no
    names for, is left out."""
    # by model type: a Hugging Face `classifier` may be a token head
    heads = checkpoint_heads(report)
    for model_type in heads.keys() - TF1_ROLES.keys():
        logging.warning(
            "%s: its %s head is left out: google-research/bert has no names for it; export the "
            "model with export_model.py --model_type=%s",
            report.path,
            model_type,
            model_type,
        )
    labels = heads.get("classifier", {}).get("labels")
    if labels:
        logging.warning(
            "%s: the class names are not carried: a TF1 checkpoint has no place for them; "
            "export the output with --labels=%s",
            report.path,
            ",".join(labels),
        )
    return write_tf1_checkpoint(
        pretrainer,
        os.path.join(output_dir, "bert_model.ckpt"),
        heads={TF1_ROLES[t]: head for t, head in heads.items() if t in TF1_ROLES},
        names=report.loaded,
    )


def _write_bert_tf(pretrainer: BertPretrainer, report: LoadReport, output_dir: str) -> str:
    """The pretrainer, or its encoder alone without pretraining heads; task heads are dropped."""
    has_heads = not any(name.startswith("cls/") for name in report.missing)
    model = pretrainer if has_heads else pretrainer.encoder
    initialised = [name for name in tf1_variables(model) if name not in report.loaded]
    dropped = [name for name in report.loaded if name.startswith("cls/") and not has_heads]
    if initialised or dropped or report.heads:
        logging.warning(
            "bert_tf output: written as initialised: %s; not written: %s",
            ", ".join(initialised) or "none",
            ", ".join(dropped + [f"{role} head" for role in report.heads]) or "none",
        )
    checkpoint = tf.train.Checkpoint(**{"model" if has_heads else "encoder": model})
    return checkpoint.write(os.path.join(output_dir, "ckpt"))
