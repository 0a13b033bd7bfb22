"""`StartingCheckpoint`: the checkpoint a run starts from, resolved once: its format, where its
weights are, and the config and class names stored with it."""

from __future__ import annotations

import dataclasses
import os

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints.bert_tf_checkpoint import keras_file_config
from bert_tf.checkpoints.checkpoint_weights import named_setting
from bert_tf.checkpoints.formats import (
    HUGGING_FACE_FORMATS,
    CheckpointFormat,
    detect_format,
    hugging_face_config_file,
    stored_config_file,
)
from bert_tf.checkpoints.hub_saved_model import read_hub_config
from bert_tf.checkpoints.hugging_face_checkpoint import (
    read_hugging_face_config,
    read_hugging_face_labels,
)
from bert_tf.checkpoints.labels_file import labels_beside, read_labels
from bert_tf.errors import UserInputError


@dataclasses.dataclass(frozen=True)
class StartingCheckpoint:
    """A checkpoint as `resolve_starting_checkpoint` found it; `load_checkpoint` reads its weights
    (and the fine-tuned heads among them) without looking for it again.

    Attributes:
        path: the path as given: a prefix, one of its files, or a directory.
        format: its `CheckpointFormat`.
        location: the file, prefix or directory holding its weights (`detect_format`'s).
        config: the `BertConfig` stored with it, None if it has none.
        config_source: the file (or SavedModel) `config` was read from, None without one.
        labels: the class names of its fine-tuned head in output order, None if it names none.
    """

    path: str
    format: CheckpointFormat
    location: str
    config: BertConfig | None
    config_source: str | None
    labels: tuple[str, ...] | None


def resolve_starting_checkpoint(path: str | os.PathLike) -> StartingCheckpoint:
    """Finds the checkpoint at `path` (see `detect_format`) and reads what is stored with it.

    Args:
        path: a checkpoint prefix, one of its files, or the directory holding it.

    Returns:
        its `StartingCheckpoint`.

    Raises:
        CheckpointError: one line naming the file: no checkpoint there, or an unreadable one.
    """
    checkpoint_format, location = detect_format(path)
    config, source = stored_config(checkpoint_format, location)
    return StartingCheckpoint(
        os.fspath(path),
        checkpoint_format,
        location,
        config,
        source,
        stored_labels(checkpoint_format, location),
    )


def resolve_init_checkpoint(
    checkpoint: str | None, setting: str = "init_checkpoint"
) -> StartingCheckpoint | None:
    """`resolve_starting_checkpoint(checkpoint)`, its errors naming the option that gave the path.

    Args:
        checkpoint: a checkpoint prefix, one of its files, or the directory holding it; or None.
        setting: the option, which errors name: "`init_checkpoint`=path: problem".

    Returns:
        Its `StartingCheckpoint`; None without a checkpoint.

    Raises:
        CheckpointError: no checkpoint there, or an unreadable one.
    """
    if not checkpoint:
        return None
    with named_setting(setting):
        return resolve_starting_checkpoint(checkpoint)


def resolve_bert_config(
    config_file: str | None,
    checkpoint: str | StartingCheckpoint | None,
    setting: str = "init_checkpoint",
) -> BertConfig:
    """The config in `config_file`, else the one stored with `checkpoint` (`checkpoint_config`).

    Args:
        config_file: a bert_config.json, or None.
        checkpoint: the checkpoint's path, or the checkpoint as resolved; or None.
        setting: the option that gave `checkpoint`, which errors name.

    Returns:
        The config.

    Raises:
        UserInputError: naming `bert_config_file` and `setting`, when neither gives a config.
    """
    if config_file:
        return BertConfig.from_json_file(config_file)
    if not checkpoint:
        raise UserInputError(f"`bert_config_file` is required without `{setting}`")
    if isinstance(checkpoint, StartingCheckpoint):
        config, checkpoint = checkpoint.config, checkpoint.path
    else:
        with named_setting(setting):
            config = checkpoint_config(checkpoint)
    if config is None:
        raise UserInputError(
            "`bert_config_file` is required: no bert_config.json or config.json "
            f"lies beside `{setting}`={checkpoint}"
        )
    return config


def stored_config(
    checkpoint_format: CheckpointFormat, location: str
) -> tuple[BertConfig | None, str | None]:
    """`(config, source file)` stored with the checkpoint at `location`, or `(None, None)`."""
    if checkpoint_format is CheckpointFormat.TF_HUB:
        return read_hub_config(location)
    path = stored_config_file(checkpoint_format, location)
    if path is None:
        return None, None
    if checkpoint_format is CheckpointFormat.KERAS:
        return keras_file_config(path), path
    if checkpoint_format in HUGGING_FACE_FORMATS:
        return read_hugging_face_config(path), path
    return BertConfig.from_json_file(path), path


def stored_labels(checkpoint_format: CheckpointFormat, location: str) -> tuple[str, ...] | None:
    """The class names stored with the checkpoint at `location` (`checkpoint_labels`), or None."""
    if checkpoint_format is CheckpointFormat.BERT_TF:
        saved = labels_beside(location)
        return read_labels(saved) if saved else None
    config_file = hugging_face_config_file(checkpoint_format, location)
    return read_hugging_face_labels(config_file) if config_file else None


def checkpoint_labels(path: str | os.PathLike) -> tuple[str, ...] | None:
    """The class names of the checkpoint's fine-tuned head.

    A bert_tf fine-tuning run saves them beside its checkpoint (`labels.json`); a Hugging
    Face checkpoint has them as `id2label` in `config.json` (unless it holds Transformers'
    placeholders `LABEL_0`, ...). TF1, Model Garden and `.keras` heads are bare weights.

    Args:
        path: the checkpoint, in any form `detect_format` takes.

    Returns:
        The names in output order, or None.

    Raises:
        CheckpointError: no checkpoint at `path`.
        ValueError: a `labels.json` that is not a list of class names.
    """
    return stored_labels(*detect_format(path))


def checkpoint_config(path: str | os.PathLike) -> BertConfig | None:
    """The `BertConfig` stored with a checkpoint: what scripts use without `bert_config_file`.

    That is `bert_config.json` beside a TF checkpoint, Hugging Face's `config.json`
    (translated) beside `model.safetensors` / `pytorch_model.bin`, or the encoder config
    inside a `.keras` file.

    Args:
        path: the checkpoint, in any form `detect_format` takes.

    Returns:
        The config, or None without one.

    Raises:
        UserInputError: no checkpoint at `path` (`CheckpointError`), or an unreadable config file.
    """
    return stored_config(*detect_format(path))[0]
