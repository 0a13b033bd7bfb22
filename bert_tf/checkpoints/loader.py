"""`load_checkpoint`: fill a bert_tf model from a checkpoint of any format, with a report.

Formats (see `CheckpointFormat`): google-research/bert TF1 (`bert_model.ckpt`), Model
Garden TF2 encoder checkpoints, Hugging Face `model.safetensors` / `pytorch_model.bin`,
bert_tf `tf.train.Checkpoint`s holding `encoder=` or `model=`, and `.keras` files.

A run reaches it through its `init_checkpoint` option:

    config = resolve_bert_config(options.bert_config_file, options.init_checkpoint)
    model = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_init_checkpoint(options.init_checkpoint, model)  # errors name the option
"""

from __future__ import annotations

import dataclasses
import os

from absl import logging

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import tf1_names
from bert_tf.checkpoints.bert_tf_checkpoint import read_bert_tf_checkpoint, read_keras_file
from bert_tf.checkpoints.checkpoint_weights import CheckpointError, CheckpointWeights, named_setting
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.hub_saved_model import read_hub_saved_model
from bert_tf.checkpoints.hugging_face_checkpoint import read_hugging_face_checkpoint
from bert_tf.checkpoints.model_garden_checkpoint import read_model_garden_checkpoint
from bert_tf.checkpoints.starting_checkpoint import (
    StartingCheckpoint,
    resolve_starting_checkpoint,
    stored_config,
)
from bert_tf.checkpoints.tf1_checkpoint import read_tf1_checkpoint

# The config fields that change the network's weights or outputs (not dropout or init).
ARCHITECTURE_FIELDS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "max_position_embeddings",
    "type_vocab_size",
)
_LISTED = 10  # variables named per problem in an error message


@dataclasses.dataclass
class LoadReport:
    """What `load_checkpoint` did. Variable names are google-research/bert's TF1 names
    unless said otherwise.

    Attributes:
        path: the checkpoint file or prefix that was read.
        format: its `CheckpointFormat` value, e.g. "tf1" or "hf_safetensors".
        loaded: the model's variables that were filled.
        missing: the model's variables that the checkpoint lacks; they keep their initial
            values (pretraining heads under an encoder checkpoint, a `BertModel` without pooler).
        unused: checkpoint variables the model has no place for (in the checkpoint's own
            names where the format has them), e.g. `cls/...` when the model is an encoder.
        skipped: ignored by design: optimizer slots, step counters, tied copies.
        heads: fine-tuning heads found in the checkpoint, by role, `"classifier"` (TF1
            `output_weights`/`output_bias`, HF `classifier`) and `"squad"` (`cls/squad/...`,
            HF `qa_outputs`), in `keras.layers.Dense` layout: `{"kernel": [hidden, labels],
            "bias": [labels]}`, and `"labels"`, the class names in output order, where the
            checkpoint names them (`checkpoint_labels`). The loader does not assign them; a
            task model does.
        config: the `BertConfig` stored with the checkpoint, None if it has none.
        labels: the class names stored with the checkpoint (`checkpoint_labels`), None if none.
    """

    path: str
    format: str
    loaded: list[str]
    missing: list[str]
    unused: list[str]
    skipped: list[str]
    heads: dict[str, dict]
    config: BertConfig | None
    labels: tuple[str, ...] | None = None


def _read(checkpoint_format: CheckpointFormat, location: str, model) -> CheckpointWeights:
    if checkpoint_format is CheckpointFormat.TF1:
        return read_tf1_checkpoint(location)
    if checkpoint_format is CheckpointFormat.MODEL_GARDEN:
        return read_model_garden_checkpoint(
            location, tf1_names.encoder_of(model).num_attention_heads
        )
    if checkpoint_format is CheckpointFormat.BERT_TF:
        return read_bert_tf_checkpoint(location, model)
    if checkpoint_format is CheckpointFormat.KERAS:
        return read_keras_file(location)
    if checkpoint_format is CheckpointFormat.TF_HUB:
        return read_hub_saved_model(location, model)
    return read_hugging_face_checkpoint(location, checkpoint_format)


def check_stored_config(prefix: str, model, config_source: str, remedy: str = "") -> None:
    """Raises `CheckpointError` if the `bert_config.json` beside the bert_tf checkpoint `prefix`
    differs from `model`'s encoder in an architecture field; nothing to check without one.
    The message starts with `config_source`, where the model's config came from (say
    `--bert_config_file=...`), and ends with `remedy`, if given. The checkpoint itself is not
    read (it may be the one a resume finds unreadable)."""
    try:
        config, source = stored_config(CheckpointFormat.BERT_TF, prefix)
        if config is not None:
            check_config(prefix, config, source, model)
    except CheckpointError as e:
        raise CheckpointError(f"{config_source}: {e}" + (f"; {remedy}" if remedy else "")) from None


def check_config(location: str, config: BertConfig, source: str, model) -> None:
    """Raises `CheckpointError` (naming `location`) if `config`, read from `source`, differs
    from `model`'s encoder in an architecture field."""
    ours = tf1_names.encoder_of(model).bert_config
    differences = [
        f"{field} {getattr(ours, field)!r} in the model, {getattr(config, field)!r} in {source}"
        for field in ARCHITECTURE_FIELDS
        if getattr(ours, field) != getattr(config, field)
    ]
    if differences:
        raise CheckpointError(
            f"{location}: the model's config does not match the checkpoint's: "
            + "; ".join(differences)
        )


def _listing(problem: str, names: list[str]) -> list[str]:
    if not names:
        return []
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return [f"{problem}: {', '.join(names[:_LISTED])}{more}"]


def _assign(weights: CheckpointWeights, model, checkpoint: StartingCheckpoint) -> LoadReport:
    """Checks every shape first, then assigns: a checkpoint that does not fit changes nothing."""
    table = tf1_names.tf1_variables(model)
    tensors, heads = {}, {}
    for name, value in weights.tensors.items():
        if (part := tf1_names.task_head_part(name)) is not None:
            role, kind = part
            heads.setdefault(role, {})[kind] = value.T if kind == "kernel" else value
        else:
            tensors[name] = value

    mismatched = [
        f"{name} {list(value.shape)} vs {list(table[name].shape)}"
        for name, value in tensors.items()
        if name in table and tuple(value.shape) != table[name].shape
    ]
    missing = [name for name in table if name not in tensors]
    required = [
        name
        for name in missing
        if tf1_names.is_encoder_name(name) and name not in tf1_names.OPTIONAL
    ]
    unexpected = weights.unexpected + [
        name for name in tensors if name not in table and tf1_names.is_encoder_name(name)
    ]
    if mismatched or required or unexpected:
        theirs = tf1_names.sizes({name: value.shape for name, value in tensors.items()})
        ours = tf1_names.sizes({name: entry.shape for name, entry in table.items()})
        problems = [
            f"{field} is {theirs[field]} in the checkpoint and {ours[field]} in the model"
            for field in theirs
            if field in ours and theirs[field] != ours[field]
        ]
        problems += _listing("shape mismatch (checkpoint vs model)", mismatched)
        problems += _listing("missing from the checkpoint", required)
        problems += _listing("not in the model", unexpected)
        raise CheckpointError(
            f"{weights.path}: checkpoint does not fit the model: " + "; ".join(problems)
        )

    loaded = [name for name in table if name in tensors]
    for name in loaded:
        table[name].assign(tensors[name])
    report = LoadReport(
        path=weights.path,
        format=weights.format,
        loaded=loaded,
        missing=missing,
        unused=weights.unused + [name for name in tensors if name not in table],
        skipped=weights.skipped,
        heads=heads,
        config=checkpoint.config,
        labels=checkpoint.labels,
    )
    logging.info(
        "%s (%s): loaded %d variables, skipped %d",
        report.path,
        report.format,
        len(loaded),
        len(report.skipped),
    )
    if report.missing:
        logging.warning(
            "%s: not in the checkpoint, left as initialised: %s",
            report.path,
            ", ".join(report.missing),
        )
    if report.unused:
        logging.warning(
            "%s: unused checkpoint variables: %s", report.path, ", ".join(report.unused)
        )
    for role, head in heads.items():
        logging.info(
            "%s: %s head found: %s",
            report.path,
            role,
            ", ".join(f"{kind} {list(value.shape)}" for kind, value in head.items()),
        )
    return report


def load_checkpoint(path: str | os.PathLike | StartingCheckpoint, model) -> LoadReport:
    """Fills `model` from the checkpoint at `path`, recognising its format (module docstring).

    Args:
        path: a checkpoint prefix, one of its files, or the directory holding it; or the
            checkpoint as `resolve_starting_checkpoint` found it.
        model: a `BertEncoder`, a `BertPretrainer` (its heads are filled when the checkpoint
            has them) or a task model with an `encoder` (fill its head from `report.heads`).

    Returns:
        A `LoadReport`; missing and unused variables are also logged as warnings.

    Raises:
        CheckpointError: one line naming the file or variables, and nothing assigned: an
            unreadable checkpoint; a stored config, shapes or encoder variables disagreeing
            with the model's; a Model Garden checkpoint with another head count.
    """
    checkpoint = path if isinstance(path, StartingCheckpoint) else resolve_starting_checkpoint(path)
    if checkpoint.config is not None:
        check_config(checkpoint.location, checkpoint.config, checkpoint.config_source, model)
    report = _assign(_read(checkpoint.format, checkpoint.location, model), model, checkpoint)
    classifier, labels = report.heads.get("classifier"), checkpoint.labels
    if classifier is not None and labels is not None and len(labels) == len(classifier["bias"]):
        classifier["labels"] = labels
    return report


def load_init_checkpoint(checkpoint: str | StartingCheckpoint, model) -> LoadReport:
    """`load_checkpoint(checkpoint, model)`, its errors naming `init_checkpoint`, the load logged.

    Args:
        checkpoint: the `init_checkpoint` path, or the checkpoint as resolved.
        model: the model to fill, as for `load_checkpoint`.

    Returns:
        The `LoadReport`.

    Raises:
        CheckpointError: as `load_checkpoint`'s, worded "`init_checkpoint`=path: problem".
    """
    with named_setting("init_checkpoint"):
        report = load_checkpoint(checkpoint, model)
    logging.info(
        "Initialised from %s (%s): %d variables", report.path, report.format, len(report.loaded)
    )
    return report
