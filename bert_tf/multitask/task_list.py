"""The task list of `--tasks` (`name:kind:data_dir[:weight],...`) and the task drawn per step."""

from __future__ import annotations

import dataclasses

import numpy as np

from bert_tf.errors import UserInputError

KINDS = ("classifier", "ner", "squad", "multiple_choice")  # the single-task scripts' task kinds


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One entry of `--tasks`.

    Attributes:
        name: the task's name, its output subdirectory; for `classifier`, the GLUE task (MRPC).
        kind: one of `KINDS`.
        data_dir: the task's data directory, as its single-task script's `--data_dir`.
        weight: scales the task's sampling probability; 0 never trains it.
    """

    name: str
    kind: str
    data_dir: str
    weight: float = 1.0


def parse_tasks(text: str | None) -> list[TaskSpec]:
    """The `TaskSpec`s of `--tasks`; ValueError naming `--tasks` and the bad entry."""
    if not text:
        raise UserInputError(
            f"`tasks` is required: name:kind:data_dir[:weight],... (kind: {', '.join(KINDS)})"
        )
    specs = []
    for entry in text.split(","):
        parts = entry.strip().split(":")
        if len(parts) not in (3, 4) or not all(parts[:3]):
            raise UserInputError(f"`tasks`: {entry!r} is not name:kind:data_dir[:weight]")
        name, kind, data_dir = parts[:3]
        if kind not in KINDS:
            raise UserInputError(
                f"`tasks`: {entry!r}: kind {kind!r} is not one of {', '.join(KINDS)}"
            )
        try:
            weight = float(parts[3]) if len(parts) == 4 else 1.0
        except ValueError:
            weight = -1.0
        if not weight >= 0:
            raise UserInputError(f"`tasks`: {entry!r}: the weight must be a number >= 0")
        specs.append(TaskSpec(name, kind, data_dir, weight))
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise UserInputError(f"`tasks`: each task needs its own name: {', '.join(names)}")
    if not any(spec.weight > 0 for spec in specs):
        raise UserInputError("`tasks`: every weight is 0, so nothing would train")
    return specs


def sampling_probabilities(
    sizes: list[int], weights: list[float], sampling: str, temperature: float = 1.0
) -> np.ndarray:
    """Each task's probability of being a step's task `[tasks]`.

    proportional: size; uniform: 1; temperature: size ** (1 / temperature); each times its
    weight, then normalised.
    """
    sizes = np.asarray(sizes, np.float64)
    base = {
        "proportional": sizes,
        "uniform": np.ones_like(sizes),
        "temperature": sizes ** (1.0 / temperature),
    }[sampling]
    scores = base * np.asarray(weights, np.float64)
    return scores / scores.sum()


def task_schedule(probabilities: np.ndarray, steps: int, seed: int | None) -> np.ndarray:
    """The task of each step `[steps]`, drawn with `seed`: a resumed run redraws the same."""
    return np.random.default_rng(seed).choice(len(probabilities), size=steps, p=probabilities)


def batch_rows(
    num_rows: int, batch_size: int, use: int, seed: int | None, task_index: int
) -> np.ndarray:
    """The rows of a task's `use`-th batch (0-based) `[batch_size]`: the
    training set shuffled afresh for each pass over it, from `seed`, so
    that any batch can be found again without iterator state."""
    per_pass = num_rows // batch_size
    passes, index = divmod(use, per_pass)
    order = np.random.default_rng([seed or 0, task_index, passes]).permutation(num_rows)
    return order[index * batch_size : (index + 1) * batch_size]
