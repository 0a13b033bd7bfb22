"""google-research/bert's TF1 checkpoints (`bert_model.ckpt`): read them; write ours that way."""

from __future__ import annotations

import os
from typing import Iterable, Mapping

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import tf1_names
from bert_tf.checkpoints.checkpoint_weights import CheckpointWeights
from bert_tf.checkpoints.formats import CheckpointFormat
from bert_tf.checkpoints.tf_checkpoint_reader import open_reader, read_tensor


def read_tf1_checkpoint(prefix: str) -> CheckpointWeights:
    """Reads every variable of a TF1 checkpoint but optimizer slots and `global_step`."""
    reader = open_reader(prefix)
    weights = CheckpointWeights(prefix, CheckpointFormat.TF1.value, tensors={})
    for name in sorted(reader.get_variable_to_shape_map()):
        if tf1_names.is_skipped(name):
            weights.skipped.append(name)
        else:
            weights.tensors[name] = read_tensor(reader, prefix, name)
    return weights


def write_tf1_checkpoint(
    model,
    prefix: str | os.PathLike,
    heads: Mapping[str, Mapping[str, np.ndarray]] | None = None,
    names: Iterable[str] | None = None,
) -> str:
    """Writes `model` under google-research/bert's TF1 names, as `tf.compat.v1.train.Saver` would.

    Args:
        model: a `BertEncoder`, a `BertPretrainer` (adds `cls/predictions/...` and
            `cls/seq_relationship/...`) or a model with an `encoder`.
        prefix: the checkpoint prefix, e.g. `out/bert_model.ckpt`, for `prefix.index` and
            `prefix.data-00000-of-00001` (each written under a temporary name, then renamed).
        heads: fine-tuning heads by role (`LoadReport.heads`): `{"classifier": {"kernel":
            [hidden, labels], "bias": [labels]}, "squad": ...}`, written as `output_weights`
            / `output_bias` and `cls/squad/...`.
        names: write only these TF1 names of the model (e.g. `LoadReport.loaded`, so that
            a conversion writes what its input had); all of them by default.

    Returns:
        The prefix, ready for google-research/bert's `--init_checkpoint`.
    """
    prefix = os.fspath(prefix)
    table = tf1_names.tf1_variables(model)
    tensors = {name: table[name].numpy() for name in (table if names is None else names)}
    for role, head in (heads or {}).items():
        tensors.update(tf1_names.task_head_tensors(role, head))
    tf.io.gfile.makedirs(os.path.dirname(prefix) or ".")
    names = sorted(tensors)
    tf.raw_ops.SaveV2(
        prefix=prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tensors[name] for name in names],
    )
    return prefix
