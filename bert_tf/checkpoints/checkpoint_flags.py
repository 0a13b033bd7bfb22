"""Fills the vocab flags from a TF Hub SavedModel given as `--init_checkpoint`."""

from __future__ import annotations

from absl import logging

from bert_tf.checkpoints.checkpoint_weights import named_setting
from bert_tf.checkpoints.formats import CheckpointFormat, detect_format
from bert_tf.checkpoints.hub_saved_model import hub_do_lower_case, hub_vocab_file


def take_vocab_from_checkpoint(flag_values) -> None:
    """Fills `--vocab_file` and `--do_lower_case`, where not given, from a TF Hub SavedModel at
    `--init_checkpoint`: its `assets/vocab.txt`, and the `do_lower_case` it records."""
    checkpoint = flag_values["init_checkpoint"].value
    if not checkpoint:
        return
    with named_setting("init_checkpoint"):
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
