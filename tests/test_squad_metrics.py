"""SQuAD post-processing on hand-built logits; the official EM/F1 on hand-checked predictions."""

import logging

import numpy as np
import pytest

from bert_tf.data.squad import SquadExample, SquadFeatures
from bert_tf.metrics import squad_metrics

CONTEXT = "alpha beta gamma delta"
# [CLS] q [SEP] alpha beta gamma delta [SEP]: the context words sit at columns 3..6.
CHAR_START = [-1, -1, -1, 0, 6, 11, 17, -1]
CHAR_END = [-1, -1, -1, 5, 10, 16, 22, -1]
COLUMN = {"alpha": 3, "beta": 4, "gamma": 5, "delta": 6}


def _features(windows=1, max_context=None, example_index=None):
    """`windows` copies of the one-window layout above (all tokens max context unless given)."""
    if max_context is None:
        max_context = [[c >= 0 for c in CHAR_START]] * windows
    return SquadFeatures(
        inputs={},
        start_positions=np.zeros(windows, np.int32),
        end_positions=np.zeros(windows, np.int32),
        example_index=np.asarray(example_index or [0] * windows, np.int32),
        token_char_start=np.tile(np.array(CHAR_START, np.int32), (windows, 1)),
        token_char_end=np.tile(np.array(CHAR_END, np.int32), (windows, 1)),
        token_is_max_context=np.asarray(max_context, bool),
    )


def _logits(values, windows=1):
    """`{word or column: logit}` -> `[windows, 8]`, the rest -10."""
    logits = np.full((windows, 8), -10.0)
    for window, entries in enumerate(values if windows > 1 else [values]):
        for key, value in entries.items():
            logits[window, COLUMN.get(key, key)] = value
    return logits


EXAMPLE = SquadExample("q1", "q", CONTEXT, (("beta", 6),))


def _predict(start, end, **kwargs):
    return squad_metrics.postprocess([EXAMPLE], _features(), _logits(start), _logits(end), **kwargs)


def test_picks_the_best_span_with_start_before_end():
    assert _predict({"beta": 5}, {"gamma": 5}).predictions == {"q1": "beta gamma"}
    # Best start gamma and best end beta are out of
    # order; (beta, beta) = 8 beats (gamma, delta) = 7.
    result = _predict({"gamma": 5, "beta": 3}, {"beta": 5, "delta": 2})
    assert result.predictions == {"q1": "beta"}
    nbest = result.nbest["q1"]
    assert [c["text"] for c in nbest[:3]] == ["beta", "gamma delta", "beta gamma delta"]
    assert (nbest[0]["start_logit"], nbest[0]["end_logit"]) == (3.0, 5.0)
    scores = np.array([c["start_logit"] + c["end_logit"] for c in nbest])
    probabilities = np.array([c["probability"] for c in nbest])
    np.testing.assert_allclose(probabilities, np.exp(scores) / np.exp(scores).sum())
    assert (np.diff(scores) <= 0).all() and len({c["text"] for c in nbest}) == len(nbest) <= 20


def test_respects_max_answer_length_and_skips_question_tokens():
    start, end = {"alpha": 5}, {"delta": 5, "beta": 4}
    assert _predict(start, end, max_answer_length=4).predictions["q1"] == "alpha beta gamma delta"
    assert _predict(start, end, max_answer_length=2).predictions["q1"] == "alpha beta"
    # [CLS] and the question (columns 0-2) are never an answer, however high their logits.
    assert _predict({0: 9, 1: 9, "gamma": 1}, {0: 9, 2: 9, "gamma": 1}).predictions["q1"] == "gamma"
    # 3 starts x 3 ends give 8 valid spans; the n best keep 3.
    nbest = _predict(
        {"alpha": 3, "beta": 2, "gamma": 1}, {"delta": 3, "gamma": 2, "beta": 1}, n_best_size=3
    )
    assert [c["text"] for c in nbest.nbest["q1"]] == [
        "alpha beta gamma delta",
        "alpha beta gamma",
        "beta gamma delta",
    ]


def test_a_question_without_a_valid_span_gets_empty_and_is_logged_when_verbose(caplog):
    """google-research/bert's placeholder "empty"; --verbose_logging names each such question."""
    start, end = {"delta": 5}, {"alpha": 5}  # the one start is after the one end
    for verbose_logging in (False, True):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="absl"):
            result = _predict(start, end, n_best_size=1, verbose_logging=verbose_logging)
        assert result.predictions == {"q1": "empty"}
        assert (
            caplog.messages
            == [
                "question q1: no valid answer span among its windows' top 1 start and end "
                "tokens; its answer is the placeholder 'empty'"
            ]
            * verbose_logging
        )
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="absl"):
        _predict({"beta": 5}, {"gamma": 5}, verbose_logging=True)
    assert not caplog.messages  # a question with a span: nothing to log


def test_version_2_answers_nothing_when_no_span_is_valid():
    """Not google-research/bert's placeholder "empty", whose logits 0 would set the null odds."""
    examples = [SquadExample("q1", "q", CONTEXT, (), is_impossible=True)]
    # The one start is after the one end; the null score, -20, is below the placeholder's 0.
    result = squad_metrics.postprocess(
        examples,
        _features(),
        _logits({"delta": 5}),
        _logits({"alpha": 5}),
        n_best_size=1,
        version_2_with_negative=True,
        null_score_diff_threshold=1e9,
    )
    assert result.predictions == {"q1": ""} and result.null_odds == {"q1": float("inf")}
    assert [c["text"] for c in result.nbest["q1"]] == ["", "empty"]


def test_start_must_have_max_context_and_windows_are_pooled():
    # Two windows of one example: "alpha" has its max context only in the second window.
    max_context = [[c >= 0 for c in CHAR_START]] * 2
    max_context[0] = [False, False, False, False, True, True, True, False]
    start = _logits([{"alpha": 9, "beta": 2}, {"alpha": 1}], windows=2)
    end = _logits([{"alpha": 9, "beta": 2}, {"alpha": 1}], windows=2)
    result = squad_metrics.postprocess([EXAMPLE], _features(2, max_context), start, end)
    # (alpha, alpha) scores 18 in window 0 but is not allowed there; window 1's scores 2 < beta's 4.
    assert result.predictions["q1"] == "beta"
    assert [c["text"] for c in result.nbest["q1"]][:2] == ["beta", "alpha"]


def test_version_2_null_score_and_threshold():
    examples = [SquadExample("q1", "q", CONTEXT, (), is_impossible=True)]
    # Null scores 2 + 2 = 4 (window 0) and 3 + 3 = 6 (window 1): the minimum, 4, counts.
    start = _logits([{0: 2, "beta": 1}, {0: 3, "gamma": 1}], windows=2)
    end = _logits([{0: 2, "beta": 2}, {0: 3, "gamma": 0}], windows=2)
    features = _features(2, example_index=[0, 0])

    def predict(threshold, **kwargs):
        return squad_metrics.postprocess(
            examples,
            features,
            start,
            end,
            version_2_with_negative=True,
            null_score_diff_threshold=threshold,
            **kwargs,
        )

    result = predict(0.0)
    assert result.null_odds == {"q1": pytest.approx(4 - 3)}  # best span "beta": 1 + 2
    assert result.predictions == {"q1": ""}
    assert predict(1.5).predictions == {"q1": "beta"}
    nbest = result.nbest["q1"]
    assert nbest[0]["text"] == "" and (nbest[0]["start_logit"], nbest[0]["end_logit"]) == (2.0, 2.0)
    assert squad_metrics.postprocess(examples, features, start, end).null_odds == {}


def test_official_evaluator_v1_on_hand_checked_predictions():
    examples = [
        SquadExample("a", "", "", (("Marguerite Oléron", 0),)),
        SquadExample("b", "", "", (("the Hallam hills", 0), ("Hallam hills", 4))),
        SquadExample("c", "", "", (("212 kilometres", 0),)),
        SquadExample("d", "", "", (("1931", 0),)),
    ]
    predictions = {
        "a": "marguerite Oléron.",  # normalized: case and punctuation -> EM 1, F1 1
        "b": "Hallam",  # vs "hallam hills": P 1, R 1/2 -> F1 2/3
        "c": "212 kilometres west",  # P 2/3, R 1 -> F1 0.8
        "d": "1874",  # 0, 0
    }
    scores = squad_metrics.evaluate(examples, predictions)
    assert scores == pytest.approx(
        {"exact_match": 100 * 1 / 4, "f1": 100 * (1 + 2 / 3 + 0.8 + 0) / 4}
    )


def test_official_evaluator_v2_on_hand_checked_predictions():
    examples = [
        SquadExample("a", "", "", (("Marguerite Oléron", 0),)),
        SquadExample("b", "", "", (("the Hallam hills", 0),)),
        SquadExample("e", "", "", (), is_impossible=True),
        SquadExample("f", "", "", (), is_impossible=True),
        SquadExample("g", "", "", (("342", 0),)),
    ]
    predictions = {"a": "Marguerite Oléron", "b": "Hallam", "e": "", "f": "Lyonne", "g": ""}
    null_odds = {"a": -5.0, "b": -3.0, "e": 2.0, "f": 1.0, "g": 0.5}
    scores = squad_metrics.evaluate(examples, predictions, null_odds, version_2_with_negative=True)
    # EM: a, e -> 2/5. F1: a 1, b 2/3, e 1 (both empty), f 0, g 0.
    assert scores["exact_match"] == pytest.approx(40.0)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1) / 5)
    assert scores["HasAns_f1"] == pytest.approx(100 * (1 + 2 / 3 + 0) / 3)
    assert scores["NoAns_exact"] == scores["NoAns_f1"] == pytest.approx(50.0)
    # Best threshold, by rising null odds: start at 2 (all null: e, f right); a +1, b +2/3 -> 3.667
    # at -3; g (answerable, 0) +0; f (a wrong span) -1; e (null) +0.
    assert scores["best_f1"] == pytest.approx(100 * (2 + 1 + 2 / 3) / 5)
    assert scores["best_f1_thresh"] == -3.0


def test_cmrc2018_units_split_chinese_by_character_and_drop_punctuation_and_spaces():
    assert squad_metrics.cmrc2018_units(" 基于BERT模型，准确率 92%。") == [
        "基",
        "于",
        "bert",
        "模",
        "型",
        "准",
        "确",
        "率",
        "92",
        "%",
    ]
    assert squad_metrics.cmrc2018_units("《三体》", remove_punctuation=False) == [
        "《",
        "三",
        "体",
        "》",
    ]


@pytest.mark.parametrize(
    "answers,prediction,f1,em",
    [
        (["北京大学"], "北京大学", 1.0, 1.0),
        # Longest common run 北京 (2 units, not the 4 shared characters): P 2/5, R 2/4.
        (["北京大学"], "北京的大学", 2 * 0.4 * 0.5 / 0.9, 0.0),
        (["《三体》"], "三体", 1.0, 1.0),  # punctuation removed for both scores
        (["三十七公里", "全长三十七公里"], "全长三十七公里。", 1.0, 1.0),  # the best gold answer
        (["明年年底"], "年底", 2 * 1.0 * 0.5 / 1.5, 0.0),  # P 2/2, R 2/4
        (["BERT模型"], "bert 模型", 1.0, 0.0),  # lower-cased units; EM keeps the space
        (["三位"], "五位作家", 2 * 0.25 * 0.5 / 0.75, 0.0),  # 位: P 1/4, R 1/2
        (["九十二"], "八十", 2 * 0.5 * (1 / 3) / (0.5 + 1 / 3), 0.0),
        (["九十二"], "，", 0.0, 0.0),
    ],
)
def test_cmrc2018_scores_on_hand_worked_answers(answers, prediction, f1, em):
    assert squad_metrics.cmrc2018_f1(answers, prediction) == pytest.approx(f1)
    assert squad_metrics.cmrc2018_exact_match(answers, prediction) == em


def test_cmrc2018_evaluate_averages_over_questions():
    examples = [
        SquadExample("a", "", "北京大学", [("北京大学", 0)]),
        SquadExample("b", "", "三位作家", [("三位", 0)]),
        SquadExample("c", "", "三位作家", [("三位", 0)]),
    ]
    # c: no prediction
    scores = squad_metrics.evaluate_cmrc2018(examples, {"a": "北京的大学", "b": "三位"})
    assert scores == pytest.approx({"exact_match": 100 / 3, "f1": 100 * (4 / 9 + 1) / 3})
