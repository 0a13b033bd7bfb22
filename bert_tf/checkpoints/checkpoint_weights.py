"""`CheckpointWeights`, what every reader returns, and `CheckpointError`."""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from bert_tf.errors import UserInputError


class CheckpointError(UserInputError):
    """A checkpoint that is unreadable or does not fit the model (one line: file or variable)."""


@contextlib.contextmanager
def named_setting(setting: str):
    """Prefixes a `CheckpointError` ("path: problem") with the setting that gave the path:
    "`setting`=path: problem" (the command line words it as `--setting=path: problem`)."""
    try:
        yield
    except CheckpointError as e:
        raise CheckpointError(f"`{setting}`={e}") from None


@dataclasses.dataclass
class CheckpointWeights:
    """A checkpoint read into memory, in google-research/bert's TF1 names and layouts.

    Every format's reader translates its names into the TF1 ones (`bert/encoder/layer_0/...`,
    `cls/predictions/...`, `output_weights`), so that one table (`tf1_names`) fills the model.

    Attributes:
        path: the checkpoint file or prefix that was read.
        format: the `CheckpointFormat` value of the checkpoint.
        tensors: TF1 name -> array in the TF1 layout (`cls/seq_relationship/output_weights`
            is `[2, hidden]`, attention kernels are `[hidden, hidden]`).
        unused: checkpoint variables, in the checkpoint's own names, that no rule of the
            reader maps to a TF1 name.
        unexpected: checkpoint variables inside the encoder that the model has no place for
            (only a structural reader can tell them; the loader refuses them).
        skipped: what is ignored by design: optimizer slots, step counters, tied copies.
    """

    path: str
    format: str
    tensors: dict[str, np.ndarray]
    unused: list[str] = dataclasses.field(default_factory=list)
    unexpected: list[str] = dataclasses.field(default_factory=list)
    skipped: list[str] = dataclasses.field(default_factory=list)
