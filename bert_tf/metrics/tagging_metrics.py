"""Token tagging metrics (word accuracy; entity precision/recall/F1 with seqeval) and CoNLL output.

Entity tags are `O` or carry a `B-`/`I-`/`E-`/`S-` prefix. BIO tags are scored
as `conlleval.pl` scores them (seqeval's default mode); BIOES tags with
seqeval's strict IOBES scheme. Other tag sets (e.g. part of speech) get word
accuracy only.

Example:
>>> tagging_scores([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "B-LOC"]], "BIO")
{'accuracy': 0.6666666666666666, 'precision': 0.5, 'recall': 1.0, 'f1': 0.6666666666666666}
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from seqeval import metrics as seqeval_metrics
from seqeval import scheme as seqeval_scheme

from bert_tf import io_utils

_ENTITY_PREFIXES = ("B-", "I-", "E-", "S-")


def entity_scheme(labels: Sequence[str]) -> str | None:
    """"BIOES" or "BIO" when every label is `O` or prefixed entity tag, else None (plain tags)."""
    if not all(label == "O" or label[:2] in _ENTITY_PREFIXES for label in labels):
        return None
    return "BIOES" if any(label[:2] in ("E-", "S-") for label in labels) else "BIO"


def token_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """The fraction of words whose predicted tag equals the gold tag."""
    gold_flat, predicted_flat = _flatten(gold), _flatten(predicted)
    if len(gold_flat) != len(predicted_flat):
        raise ValueError(f"{len(gold_flat)} gold tags but {len(predicted_flat)} predicted")
    return float(np.mean(gold_flat == predicted_flat)) if len(gold_flat) else 0.0


def tagging_scores(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]],
                   scheme: str | None) -> dict[str, float]:
    """`accuracy`, plus entity-level `precision`, `recall`, `f1` when `scheme` is "BIO" or "BIOES"."""
    scores = {"accuracy": token_accuracy(gold, predicted)}
    if scheme is None:
        return scores
    gold, predicted = [list(s) for s in gold], [list(s) for s in predicted]
    kwargs = {"mode": "strict", "scheme": seqeval_scheme.IOBES} if scheme == "BIOES" else {}
    for name, score in (("precision", seqeval_metrics.precision_score),
                        ("recall", seqeval_metrics.recall_score), ("f1", seqeval_metrics.f1_score)):
        scores[name] = float(score(gold, predicted, zero_division=0, **kwargs))
    return scores


def write_conll_predictions(path: str | os.PathLike, words: Sequence[Sequence[str]],
                            gold: Sequence[Sequence[str]] | None, predicted: Sequence[Sequence[str]]) -> None:
    """Writes `word gold predicted` lines (conlleval's input), or `word predicted` where `gold` is
    None, a blank line after each sentence."""
    tags = (predicted,) if gold is None else (gold, predicted)
    sentences = ("".join(" ".join(line) + "\n" for line in zip(*columns)) for columns in zip(words, *tags))
    io_utils.atomic_write_text(path, "\n".join(sentences))


def _flatten(sentences) -> np.ndarray:
    return np.asarray([tag for sentence in sentences for tag in sentence], dtype=object)
