"""A task model or a pretrainer, with its head, from a checkpoint in any format, for export.

The head comes from the checkpoint: google-research/bert's `output_weights` or `cls/squad/...`
(any format `load_checkpoint` reads), or the head layer of a bert_tf task model
(`tf.train.Checkpoint(model=...)`, `.keras`). A head that names its classes (Hugging Face
`id2label`, the `labels.json` of a bert_tf fine-tuning run) is reordered to the `labels` asked
for where they are the same names; other names are an error for a Hugging Face head and a
renaming of a bert_tf one. The checkpoint is read once (a `.keras` file twice).

Example (a google-research/bert classifier checkpoint with 3 classes):
>>> import numpy as np
>>> from bert_tf.checkpoints import write_tf1_checkpoint
>>> config = BertConfig.from_json_file("bert_config.json")
>>> head = {"kernel": np.zeros((config.hidden_size, 3), "float32"),
...         "bias": np.zeros(3, "float32")}
>>> prefix = write_tf1_checkpoint(BertEncoder.from_bert_config(config), "tf1/bert_model.ckpt",
...                               heads={"classifier": head})
>>> model = model_from_checkpoint(prefix, "classifier", config)
>>> type(model).__name__, model.num_classes
('BertClassifier', 3)
"""

from __future__ import annotations

from absl import logging

from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import (
    CheckpointFormat,
    StartingCheckpoint,
    load_checkpoint,
    resolve_starting_checkpoint,
)
from bert_tf.checkpoints.task_heads import (
    TASK_MODELS,
    checkpoint_heads,
    label_order,
    load_task_head,
    missing_head,
)
from bert_tf.errors import UserInputError
from bert_tf.export.model_types import CLASS_MODEL_TYPES, MODEL_TYPES
from bert_tf.models import BertEncoder, BertPretrainer

_MASKED_LM = "cls/predictions/"  # the TF1 names of the masked-LM head's weights


def model_from_checkpoint(
    checkpoint: str | StartingCheckpoint,
    model_type: str,
    config: BertConfig,
    num_classes: int | None = None,
    labels: list[str] | None = None,
):
    """A model of `model_type` filled from `checkpoint`, its head included (module docstring).

    Args:
        checkpoint: a path, or the checkpoint as `resolve_starting_checkpoint` found it.
        model_type: one of `MODEL_TYPES`; "hub" is a `BertPretrainer`, or its `BertEncoder`
            alone when the checkpoint has no masked-LM weights (the export then has no `mlm`).
        config: the encoder's config.
        num_classes: the head's width; None: the checkpoint's head's.
        labels: the class names in id order, for a head that names its classes.

    Returns:
        The model, built, with the checkpoint's weights.

    Raises:
        UserInputError: no head of `model_type`, a head of another width, or other labels.
    """
    if model_type not in MODEL_TYPES:
        raise UserInputError(
            f"`model_type`={model_type!r}: expected one of {', '.join(MODEL_TYPES)}"
        )
    if not isinstance(checkpoint, StartingCheckpoint):
        checkpoint = resolve_starting_checkpoint(checkpoint)
    if model_type == "hub":
        return _hub_model_from_checkpoint(checkpoint, config)
    encoder = BertEncoder.from_bert_config(config)
    report = load_checkpoint(checkpoint, encoder)
    heads = checkpoint_heads(report)
    head = heads.get(model_type)
    if head is None:
        raise UserInputError(
            f"{checkpoint.path}: {missing_head(model_type)}; "
            f"{_what_to_export(heads, report.unused)}"
        )
    if (
        labels
        and report.format == CheckpointFormat.BERT_TF.value
        and label_order(head.get("labels") or (), labels) is None
    ):
        head = {**head, "labels": None}  # other names than labels.json's: a renaming
    model_class = TASK_MODELS[model_type][0]
    if model_type in CLASS_MODEL_TYPES:
        model = model_class(encoder, _num_classes(checkpoint.path, model_type, head, num_classes))
    else:
        model = model_class(encoder)
    model.build_with_dummy_inputs()
    problem = load_task_head(model, {model_type: head}, labels)
    if problem:
        raise UserInputError(f"{checkpoint.path}: {problem}")
    return model


def _hub_model_from_checkpoint(
    checkpoint: StartingCheckpoint, config: BertConfig
) -> BertPretrainer | BertEncoder:
    """The pretrainer filled from `checkpoint`; its encoder alone without masked-LM weights."""
    model = BertPretrainer(BertEncoder.from_bert_config(config))
    model.build_with_dummy_inputs()
    report = load_checkpoint(checkpoint, model)
    if any(name.startswith(_MASKED_LM) for name in report.missing):
        logging.warning(
            "%s has no masked-LM weights (%s...): exporting the encoder without mlm",
            checkpoint.path,
            _MASKED_LM,
        )
        return model.encoder
    return model


def _what_to_export(heads: dict, unused: list[str]) -> str:
    """The advice for a checkpoint without the head asked for: the --model_type of the heads it has
    (`unused`: the checkpoint variables an encoder left,
    where a pretrainer's masked-LM head shows)."""
    if not heads and any(name.startswith(_MASKED_LM) for name in unused):
        return (
            "it is a pretraining checkpoint: export it with `model_type`=hub, or fine-tune it first"
        )
    if not heads:
        return "export it with the `model_type` it was fine-tuned for"
    found = list(heads)
    return (
        f"it holds a {' and a '.join(found)} head: export it with "
        f"{' or '.join(f'`model_type`={name}' for name in found)}"
    )


def _num_classes(checkpoint: str, model_type: str, head: dict, num_classes: int | None) -> int:
    """`num_classes`, else the width of the checkpoint's classifier head; the two must agree."""
    width = head["kernel"].shape[-1]
    if num_classes not in (None, width):
        raise UserInputError(
            f"`num_classes`={num_classes} (or the number of `labels`) does not "
            f"fit {checkpoint}: its {model_type} head has {width} classes"
        )
    return width
