"""SQuAD post-processing (window logits -> answer text) and the official EM/F1.

`postprocess` turns per-window `start_logits`/`end_logits` into the contents of
google-research/bert's `predictions.json`, `nbest_predictions.json` and, for
SQuAD 2.0, `null_odds.json`; `evaluate` scores predictions with Model Garden's
copies of the official SQuAD v1.1 and v2.0 evaluation scripts, and
`evaluate_cmrc2018` with CMRC 2018's rules (character-level, for Chinese).

Example:
>>> from bert_tf.data.squad import convert_examples_to_features, read_squad_examples
>>> from bert_tf.tokenization import BertTokenizer
>>> examples = read_squad_examples("dev-v1.1.json")
>>> features = convert_examples_to_features(examples, BertTokenizer("vocab.txt"), max_seq_length=32,
...                                         max_query_length=8)
>>> logits = np.eye(32)  # logits[i] picks token i
>>> result = postprocess(examples, features, logits[features.start_positions],
...                      logits[features.end_positions])
>>> result.predictions
{'q1': 'Ann'}
>>> evaluate(examples, result.predictions)
{'exact_match': 100.0, 'f1': 100.0}
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
from absl import logging
from official.nlp.tools import squad_evaluate_v1_1, squad_evaluate_v2_0
from scipy import special


@dataclasses.dataclass
class SquadPredictions:
    """Per question id: the answer text, the n best candidates, and (SQuAD 2.0) the null odds."""

    predictions: dict[str, str]
    # [{"text", "probability", "start_logit", "end_logit"}], best first
    nbest: dict[str, list[dict]]
    null_odds: dict[str, float]  # null score - best span score; empty for SQuAD 1.1


def postprocess(
    examples,
    features,
    start_logits,
    end_logits,
    n_best_size: int = 20,
    max_answer_length: int = 30,
    version_2_with_negative: bool = False,
    null_score_diff_threshold: float = 0.0,
    verbose_logging: bool = False,
) -> SquadPredictions:
    """Window logits `[n, seq]` -> answers, as google-research/bert's `write_predictions`.

    `examples` have `qas_id` and `context`; `features` (a `bert_tf.data.squad.SquadFeatures`)
    give each window's `example_index` `[n]`, `token_char_start`/`token_char_end`
    `[n, seq]` (-1 outside the context) and `token_is_max_context` `[n, seq]`.
    A span's candidates are the top `n_best_size` starts x top `n_best_size` ends
    of a window with start <= end, at most `max_answer_length` tokens, both in the
    context and the start token in its max-context window; its score is
    start + end logit. SQuAD 2.0: the null score of a question is the smallest
    start[0] + end[0] over its windows; it answers "" when the null score exceeds
    the best span score by more than `null_score_diff_threshold`. A question with no
    valid span gets google-research/bert's placeholder "empty" (SQuAD 2.0: "", with
    null odds of infinity); `verbose_logging` logs each.
    """
    start_logits, end_logits = (
        np.asarray(start_logits, np.float64),
        np.asarray(end_logits, np.float64),
    )
    window, start, end, score = _candidate_spans(
        features, start_logits, end_logits, n_best_size, max_answer_length
    )
    example = features.example_index[window]
    order = np.lexsort((-score, example))  # by example, best first
    window, start, end, example = (a[order] for a in (window, start, end, example))
    bounds = np.searchsorted(example, np.arange(len(examples) + 1))
    null_window = _null_windows(
        features.example_index, start_logits[:, 0] + end_logits[:, 0], len(examples)
    )
    result = SquadPredictions({}, {}, {})
    for i, ex in enumerate(examples):
        rows = slice(bounds[i], bounds[i + 1])
        if verbose_logging and bounds[i] == bounds[i + 1]:
            logging.info(
                "question %s: no valid answer span among its windows' top %d start and end tokens; "
                "its answer is %s",
                ex.qas_id,
                n_best_size,
                '""' if version_2_with_negative else "the placeholder 'empty'",
            )
        # best first
        spans = [
            (
                ex.context[features.token_char_start[f, s] : features.token_char_end[f, e]],
                start_logits[f, s],
                end_logits[f, e],
            )
            for f, s, e in zip(window[rows], start[rows], end[rows])
        ]
        null = None
        if version_2_with_negative:
            null = ("", start_logits[null_window[i], 0], end_logits[null_window[i], 0])
        result.nbest[ex.qas_id] = _nbest(spans, null, n_best_size)
        result.predictions[ex.qas_id] = spans[0][0] if spans else "empty"
        if version_2_with_negative:
            # No valid span: the null answer wins, not
            # google-research/bert's placeholder with logits 0.
            best_span_score = spans[0][1] + spans[0][2] if spans else -np.inf
            result.null_odds[ex.qas_id] = odds = float(null[1] + null[2] - best_span_score)
            if odds > null_score_diff_threshold:
                result.predictions[ex.qas_id] = ""
    return result


def _candidate_spans(features, start_logits, end_logits, n_best_size, max_answer_length):
    """All valid (window, start, end, score) `[c]` among each window's top starts x top ends."""
    k = min(n_best_size, start_logits.shape[1])
    top_starts = np.argsort(-start_logits, axis=1, kind="stable")[:, :k, None]  # [n, k, 1]
    top_ends = np.argsort(-end_logits, axis=1, kind="stable")[:, None, :k]  # [n, 1, k]
    rows = np.arange(len(start_logits))[:, None, None]
    # [n, k, k]
    valid = (
        (features.token_char_start[rows, top_starts] >= 0)
        & (features.token_char_start[rows, top_ends] >= 0)
        & features.token_is_max_context[rows, top_starts]
        & (top_ends >= top_starts)
        & (top_ends - top_starts < max_answer_length)
    )
    window, i, j = np.nonzero(valid)
    start, end = top_starts[window, i, 0], top_ends[window, 0, j]
    return window, start, end, start_logits[window, start] + end_logits[window, end]


def _null_windows(example_index, null_scores, num_examples) -> np.ndarray:
    """int `[examples]`: each example's window of least null score (every example has one)."""
    order = np.lexsort((null_scores, example_index))
    return order[np.searchsorted(example_index[order], np.arange(num_examples))]


def _nbest(spans, null, n_best_size) -> list[dict]:
    """(text, start_logit, end_logit) spans, best
    first, and the null answer (or None) -> the n best.

    As google-research/bert: the best `n_best_size` distinct texts, the null
    answer "" among them or appended, "empty" (logits 0) when no span is valid,
    and softmax probabilities over the list.
    """
    nbest, seen = [], set()
    for span in spans:
        if span[0] not in seen:
            seen.add(span[0])
            nbest.append(span)
            if len(nbest) == n_best_size:
                break
    if null is not None:
        nbest = sorted(nbest + [null], key=lambda c: -(c[1] + c[2]))[:n_best_size]
        if null not in nbest:
            nbest.append(null)
    if not any(text for text, _, _ in nbest):
        nbest.append(("empty", 0.0, 0.0))
    probabilities = special.softmax(np.array([s + e for _, s, e in nbest]))
    return [
        {"text": text, "probability": float(p), "start_logit": float(s), "end_logit": float(e)}
        for (text, s, e), p in zip(nbest, probabilities)
    ]


def evaluate(
    examples,
    predictions: dict[str, str],
    null_odds: dict[str, float] | None = None,
    version_2_with_negative: bool = False,
) -> dict[str, float]:
    """The official EM and F1 (0-100) of `predictions` on `examples`' gold answers.

    SQuAD 1.1: `exact_match`, `f1`. SQuAD 2.0 adds `HasAns_*`/`NoAns_*` and, with
    `null_odds`, `best_f1` and `best_f1_thresh` (the `null_score_diff_threshold`
    that would have scored best). SQuAD 2.0's `exact_match`, `f1`, `HasAns_*` and
    `NoAns_*` equal the official evaluate-v2.0.py's run on `predictions` without
    `--na-prob-file`: given `null_odds` (null_odds.json) as `--na-prob-file`, that script
    also answers "" wherever the odds exceed its own `--na-prob-thresh` of 1.0, so its
    figures differ when `--null_score_diff_threshold` is above 1.
    """
    dataset = [
        {
            "paragraphs": [
                {
                    "qas": [
                        {"id": ex.qas_id, "answers": [{"text": text} for text, _ in ex.answers]}
                        for ex in examples
                    ]
                }
            ]
        }
    ]
    if not version_2_with_negative:
        scores = squad_evaluate_v1_1.evaluate(dataset, predictions)
        return {"exact_match": 100.0 * scores["exact_match"], "f1": 100.0 * scores["final_f1"]}
    # Without na_probs the official script scores the predictions as they are; with
    # them it also searches the best null threshold.
    scores = squad_evaluate_v2_0.evaluate(dataset, predictions)
    result = {"exact_match": scores["exact"], "f1": scores["f1"]}
    result.update(
        {
            f"{part}_{name}": scores[f"{part}_{name}"]
            for part in ("HasAns", "NoAns")
            for name in ("exact", "f1")
            if f"{part}_{name}" in scores
        }
    )
    if null_odds is not None:
        best = squad_evaluate_v2_0.evaluate(dataset, predictions, null_odds)
        result.update(
            best_exact=best["final_exact"],
            best_exact_thresh=best["final_exact_thresh"],
            best_f1=best["final_f1"],
            best_f1_thresh=best["final_f1_thresh"],
        )
    return {name: float(value) for name, value in result.items()}


# CMRC 2018's evaluation script (cmrc2018_evaluate.py): the punctuation it removes, and what it
# takes for Chinese (each such character, and each of its punctuation, is a unit of its own).
CMRC_PUNCTUATION = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")
_CMRC_CHINESE = re.compile("[\u4e00-\u9fa5]")
_CMRC_OTHER_WORDS = re.compile(r"\w+|[^\w\s]")  # its nltk.word_tokenize on the text between


def cmrc2018_units(text: str, remove_punctuation: bool = True) -> list[str]:
    """CMRC 2018's `mixed_segmentation`: lower-cased, each Chinese character and punctuation mark
    a unit, the runs of other text split into words and punctuation (where the official script
    calls nltk's word tokenizer), whitespace dropped.

    >>> cmrc2018_units("BERT 模型，2018年。")
    ['bert', '模', '型', '2018', '年']
    """
    units, run = [], []
    for char in text.lower().strip():
        if remove_punctuation and char in CMRC_PUNCTUATION:
            continue
        if _CMRC_CHINESE.match(char) or char in CMRC_PUNCTUATION:
            units += _CMRC_OTHER_WORDS.findall("".join(run))
            run = []
            units.append(char)
        else:
            run.append(char)
    return units + _CMRC_OTHER_WORDS.findall("".join(run))


def _longest_common_run(a: list[str], b: list[str]) -> int:
    """The length of the longest contiguous run of units that `a` and `b` share."""
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b):
            if x == y:
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
        previous = current
    return best


def cmrc2018_f1(answers: list[str], prediction: str) -> float:
    """The best, over the gold `answers`, of the F1 (0-1) of the longest common run of units."""
    predicted = cmrc2018_units(prediction)
    scores = [0.0]
    for answer in answers:
        gold = cmrc2018_units(answer)
        common = _longest_common_run(gold, predicted)
        if common:
            precision, recall = common / len(predicted), common / len(gold)
            scores.append(2 * precision * recall / (precision + recall))
    return max(scores)


def cmrc2018_exact_match(answers: list[str], prediction: str) -> float:
    """1.0 if the prediction equals a gold answer once lower-cased and stripped of punctuation."""

    def normalize(text):
        return "".join(c for c in text.lower().strip() if c not in CMRC_PUNCTUATION)

    return float(any(normalize(answer) == normalize(prediction) for answer in answers))


def evaluate_cmrc2018(examples, predictions: dict[str, str]) -> dict[str, float]:
    """CMRC 2018's EM and F1 (0-100) of `predictions` on `examples`' gold answers (a question
    without a prediction scores 0)."""
    f1 = em = 0.0
    for example in examples:
        answers = [text for text, _ in example.answers]
        if example.qas_id in predictions:
            f1 += cmrc2018_f1(answers, predictions[example.qas_id])
            em += cmrc2018_exact_match(answers, predictions[example.qas_id])
    count = max(len(examples), 1)
    return {"exact_match": 100.0 * em / count, "f1": 100.0 * f1 / count}
