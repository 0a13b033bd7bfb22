"""Pretraining checkpoints: named parts, a CheckpointManager, resume and warm start."""

from __future__ import annotations

import keras
import tensorflow as tf
from absl import logging

from bert_tf import output_lock
from bert_tf.checkpoints import load_init_checkpoint
from bert_tf.checkpoints.loader import check_stored_config
from bert_tf.errors import UserInputError
from bert_tf.models.bert_pretrainer import BertPretrainer

# Written only by a loss-scaled optimizer (--dtype=float16).
_LOSS_SCALE = "optimizer/dynamic_scale/.ATTRIBUTES/VARIABLE_VALUE"
# The global step; a loss-scaled optimizer counts it in its inner optimizer (its own count stays 0).
_STEP = "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"
_LOSS_SCALED_STEP = "optimizer/inner_optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"
_MASKED_LM_HEAD = "model/masked_lm_head/"
_NEXT_SENTENCE_HEAD = "model/next_sentence_head/"


def pretraining_checkpoint(model: BertPretrainer, optimizer) -> tf.train.Checkpoint:
    """The checkpoint layout: `model` (encoder + heads), `encoder` (the same encoder,
    so `tf.train.Checkpoint(encoder=...)` restores it alone) and `optimizer`
    (its slots and `iterations`, which is the global step)."""
    return tf.train.Checkpoint(model=model, encoder=model.encoder, optimizer=optimizer)


def save(manager: tf.train.CheckpointManager, step: int) -> None:
    """Saves checkpoint `step` once `output_lock.check_claim` finds the directory still ours."""
    output_lock.check_claim(manager.directory)
    manager.save(checkpoint_number=step)


def check_resumable(
    manager: tf.train.CheckpointManager,
    model: BertPretrainer,
    config_source: str,
    training: bool = True,
) -> None:
    """Refuses to resume the manager's newest checkpoint with another architecture than the
    bert_config.json beside it, with or without the next-sentence head it lacks or has, or,
    `training`, across --dtype=float16 and the other dtypes.
    `config_source` names where the model's config comes
    from (`--bert_config_file=...`), for the error."""
    latest = manager.latest_checkpoint
    if not latest:
        return
    check_stored_config(latest, model, config_source)
    names = [name for name, _ in tf.train.list_variables(latest)]
    # Another tool's checkpoint is `restore_or_initialize`'s to refuse.
    ours = any(name.startswith(_MASKED_LM_HEAD) for name in names)
    has_head = any(name.startswith(_NEXT_SENTENCE_HEAD) for name in names)
    if ours and has_head != model.next_sentence_prediction:
        raise UserInputError(
            f"`next_sentence_prediction`: {latest} was written with "
            f"`next_sentence_prediction`={str(has_head).lower()}; resume it so, "
            f"or start a new `output_dir` with `init_checkpoint`={latest}"
        )
    if not training:  # an eval reads the weights alone, float32 whatever --dtype trained them
        return
    loss_scaled = isinstance(manager.checkpoint.optimizer, keras.optimizers.LossScaleOptimizer)
    if tf.train.load_checkpoint(latest).has_tensor(_LOSS_SCALE) != loss_scaled:
        written = "with" if not loss_scaled else "without"
        raise UserInputError(
            f"`dtype`: {latest} was written {written} `dtype`=float16; resume it "
            f"{written} `dtype`=float16, or start a new `output_dir` with "
            f"`init_checkpoint`={latest}"
        )


def restore_or_initialize(
    manager: tf.train.CheckpointManager,
    model: BertPretrainer,
    init_checkpoint: str | None,
    config_source: str = "`bert_config_file`",
    training: bool = True,
) -> None:
    """Resumes from the newest checkpoint in the manager's directory; failing that,
    loads `init_checkpoint` (weights only, any format `bert_tf.checkpoints.load_checkpoint`
    reads: Google TF1, Model Garden TF2, Hugging Face, bert_tf); failing that, keeps the
    fresh weights. Not `training` (an eval), only the weights and the step are restored,
    not the optimizer's state. `config_source` names where the model's config comes from,
    for the error."""
    latest = manager.latest_checkpoint
    if latest:
        optimizer = manager.checkpoint.optimizer
        try:
            if training:
                manager.checkpoint.restore(latest).assert_existing_objects_matched()
            else:
                tf.train.Checkpoint(model=model).restore(
                    latest
                ).assert_existing_objects_matched().expect_partial()
                reader = tf.train.load_checkpoint(latest)
                optimizer.iterations.assign(
                    reader.get_tensor(
                        _LOSS_SCALED_STEP if reader.has_tensor(_LOSS_SCALED_STEP) else _STEP
                    )
                )
        except (tf.errors.OpError, IndexError) as e:  # a truncated or unreadable data file
            earlier = manager.checkpoints[-2:-1]
            remedy = (
                f", with `init_checkpoint`={earlier[0]} to start from the one before it"
                if earlier
                else ""
            )
            raise UserInputError(
                f"`output_dir`={manager.directory}: cannot read {latest} "
                f"({str(e).strip().splitlines()[0]}); start a new "
                f"`output_dir`{remedy}"
            ) from None
        except AssertionError:  # another tool's checkpoint: google-research/bert, Model Garden
            raise UserInputError(
                f"`output_dir`={manager.directory}: {latest} is not a bert_tf "
                "pretraining checkpoint; to start from it, use "
                f"`init_checkpoint`={latest} with a new `output_dir`"
            ) from None
        except ValueError as e:  # shapes of another architecture, its bert_config.json gone
            detail = str(e).strip().splitlines()[0]
            raise UserInputError(
                f"{config_source}: {latest} was written by another architecture "
                f"({detail}); resume with the config it was written with, or "
                "start a new `output_dir`"
            ) from None
        logging.info("Resumed from %s", latest)
    elif init_checkpoint:
        load_init_checkpoint(init_checkpoint, model)
