"""The scripts' `--bert_config_file` and `--init_checkpoint`, resolved with one-line errors."""

from __future__ import annotations

import contextlib

from absl import logging

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.formats import CheckpointFormat, detect_format
from bert_tf.checkpoints.hub_saved_model import hub_do_lower_case, hub_vocab_file
from bert_tf.checkpoints.loader import LoadReport, load_checkpoint
from bert_tf.checkpoints.starting_checkpoint import (StartingCheckpoint, checkpoint_config,
                                                     resolve_starting_checkpoint)
from bert_tf.errors import UserInputError


@contextlib.contextmanager
def _named_flag(flag: str):
    """Prefixes a `CheckpointError` ("path: problem") with its flag: `--flag=path: problem`."""
    try:
        yield
    except CheckpointError as e:
        raise CheckpointError(f"--{flag}={e}") from None


def resolve_init_checkpoint(checkpoint: str | None, checkpoint_flag: str = "init_checkpoint"
                            ) -> StartingCheckpoint | None:
    """`resolve_starting_checkpoint(checkpoint)`, its errors prefixed with `--<checkpoint_flag>=`;
    None without a checkpoint."""
    if not checkpoint:
        return None
    with _named_flag(checkpoint_flag):
        return resolve_starting_checkpoint(checkpoint)


def resolve_bert_config(config_file: str | None, checkpoint: str | StartingCheckpoint | None,
                        checkpoint_flag: str = "init_checkpoint") -> BertConfig:
    """The config in `config_file`, else the one stored with `checkpoint` (see `checkpoint_config`).

    Raises ValueError naming `--bert_config_file` and `--<checkpoint_flag>` when neither gives one.
    """
    if config_file:
        return BertConfig.from_json_file(config_file)
    if not checkpoint:
        raise UserInputError(f"--bert_config_file is required without --{checkpoint_flag}")
    if isinstance(checkpoint, StartingCheckpoint):
        config, checkpoint = checkpoint.config, checkpoint.path
    else:
        with _named_flag(checkpoint_flag):
            config = checkpoint_config(checkpoint)
    if config is None:
        raise UserInputError(f"--bert_config_file is required: no bert_config.json or config.json lies beside "
                             f"--{checkpoint_flag}={checkpoint}")
    return config


def load_init_checkpoint(checkpoint: str | StartingCheckpoint, model) -> LoadReport:
    """`load_checkpoint(checkpoint, model)`, its errors prefixed with `--init_checkpoint=`."""
    with _named_flag("init_checkpoint"):
        report = load_checkpoint(checkpoint, model)
    logging.info("Initialised from %s (%s): %d variables", report.path, report.format, len(report.loaded))
    return report


def take_vocab_from_checkpoint(flag_values) -> None:
    """Fills `--vocab_file` and `--do_lower_case`, where not given, from a TF Hub SavedModel at
    `--init_checkpoint`: its `assets/vocab.txt`, and the `do_lower_case` it records."""
    checkpoint = flag_values["init_checkpoint"].value
    if not checkpoint:
        return
    with _named_flag("init_checkpoint"):
        checkpoint_format, location = detect_format(checkpoint)
        if checkpoint_format is not CheckpointFormat.TF_HUB:
            return
        vocab_file, do_lower_case = hub_vocab_file(location), hub_do_lower_case(location)
    if flag_values["vocab_file"].value is None and vocab_file is not None:
        flag_values["vocab_file"].value = vocab_file
        logging.info("--vocab_file=%s, from --init_checkpoint", vocab_file)
    if not flag_values["do_lower_case"].present and do_lower_case is not None:
        flag_values["do_lower_case"].value = do_lower_case
        logging.info("--do_lower_case=%s, as --init_checkpoint records it", do_lower_case)
