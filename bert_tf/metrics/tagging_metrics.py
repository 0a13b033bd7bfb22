"""Token tagging metrics (word accuracy; entity precision/recall/F1 with seqeval) and CoNLL output.

Entity tags are `O` or carry a `B-`/`I-` prefix, plus `E-`/`S-` (BIOES),
`M-`/`E-`/`S-` (BMES, common in Chinese NER: `M-` is BIOES's `I-`) or `L-`/`U-`
(BILOU, spaCy's). BIO tags are scored as `conlleval.pl` scores them (seqeval's
default mode); BIOES, BMES and BILOU tags with seqeval's strict IOBES and BILOU
schemes. Bare `B`/`M`/`E`/`S` tags are word segmentation (one tag a character):
scored by the words their spans make. Other tag sets (e.g. part of speech, or
`E-` mixed with `L-`) get word accuracy only.

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

_STRICT_SCHEMES = {  # scheme: (its prefixes beside B- and I-, seqeval's strict scheme)
    "BIOES": ({"E-", "S-"}, seqeval_scheme.IOBES),
    "BMES": ({"M-", "E-", "S-"}, seqeval_scheme.IOBES),
    "BILOU": ({"L-", "U-"}, seqeval_scheme.BILOU),
}
SEGMENTATION = "segmentation"  # the scheme of bare B/M/E/S tags
_SEGMENTATION_TAGS = frozenset("BMES")


def entity_scheme(labels: Sequence[str]) -> str | None:
    """ "BIO", "BIOES", "BMES" or "BILOU" when every label is `O` or an entity tag of that scheme,
    `SEGMENTATION` for bare B/M/E/S tags, else None (plain tags).

    >>> entity_scheme(["B-PER", "I-PER", "L-PER", "U-LOC", "O"]), entity_scheme(["NN", "VB"])
    ('BILOU', None)
    >>> entity_scheme(["B", "M", "E", "S"]), entity_scheme(
    ...     ["B-ORG", "M-ORG", "E-ORG", "S-PER", "O"])
    ('segmentation', 'BMES')
    """
    if set(labels) <= _SEGMENTATION_TAGS:
        return SEGMENTATION
    prefixes = {label[:2] for label in labels if label != "O"} - {"B-", "I-"}
    if not prefixes:
        return "BIO"
    if "M-" in prefixes and "I-" in {label[:2] for label in labels}:
        return None  # M- is BMES's I-: both is no scheme
    return next((name for name, (own, _) in _STRICT_SCHEMES.items() if prefixes <= own), None)


def token_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """The fraction of words whose predicted tag equals the gold tag."""
    gold_flat, predicted_flat = _flatten(gold), _flatten(predicted)
    if len(gold_flat) != len(predicted_flat):
        raise ValueError(f"{len(gold_flat)} gold tags but {len(predicted_flat)} predicted")
    return float(np.mean(gold_flat == predicted_flat)) if len(gold_flat) else 0.0


def tagging_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], scheme: str | None
) -> dict[str, float]:
    """`accuracy`, plus entity-level (word-level for `SEGMENTATION`) `precision`, `recall`, `f1`
    when `scheme` is one `entity_scheme` gives."""
    scores = {"accuracy": token_accuracy(gold, predicted)}
    if scheme is None:
        return scores
    if scheme == SEGMENTATION:
        return {**scores, **segmentation_scores(gold, predicted)}
    gold, predicted = [list(s) for s in gold], [list(s) for s in predicted]
    if scheme == "BMES":  # seqeval's IOBES, with I- for M-
        gold, predicted = (
            [[f"I-{t[2:]}" if t.startswith("M-") else t for t in s] for s in tags]
            for tags in (gold, predicted)
        )
    kwargs = (
        {"mode": "strict", "scheme": _STRICT_SCHEMES[scheme][1]}
        if scheme in _STRICT_SCHEMES
        else {}
    )
    for name, score in (
        ("precision", seqeval_metrics.precision_score),
        ("recall", seqeval_metrics.recall_score),
        ("f1", seqeval_metrics.f1_score),
    ):
        scores[name] = float(score(gold, predicted, zero_division=0, **kwargs))
    return scores


def word_spans(tags: Sequence[str]) -> set[tuple[int, int]]:
    """B/M/E/S tags, one a character -> the words' `(start, end)` character spans. A word starts at
    B or S, or after E or S; so any tag sequence makes words.

    >>> sorted(word_spans(["B", "E", "S", "B", "M", "E"]))
    [(0, 2), (2, 3), (3, 6)]
    """
    starts = [i for i, tag in enumerate(tags) if i == 0 or tag in "BS" or tags[i - 1] in "ES"]
    return set(zip(starts, starts[1:] + [len(tags)]))


def segmentation_scores(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> dict[str, float]:
    """Word `precision`, `recall` and `f1` of B/M/E/S tags: a word is right when its span is."""
    right = num_gold = num_predicted = 0
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        gold_words, predicted_words = word_spans(gold_tags), word_spans(predicted_tags)
        right += len(gold_words & predicted_words)
        num_gold += len(gold_words)
        num_predicted += len(predicted_words)
    precision, recall = right / max(num_predicted, 1), right / max(num_gold, 1)
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if right else 0.0,
    }


def write_conll_predictions(
    path: str | os.PathLike,
    words: Sequence[Sequence[str]],
    gold: Sequence[Sequence[str]] | None,
    predicted: Sequence[Sequence[str]],
) -> None:
    """Writes `word gold predicted` lines (conlleval's input), or `word predicted` where `gold` is
    None, a blank line after each sentence."""
    tags = (predicted,) if gold is None else (gold, predicted)
    sentences = (
        "".join(" ".join(line) + "\n" for line in zip(*columns)) for columns in zip(words, *tags)
    )
    io_utils.atomic_write_text(path, "\n".join(sentences))


def _flatten(sentences) -> np.ndarray:
    return np.asarray([tag for sentence in sentences for tag in sentence], dtype=object)
