"""SQuAD reading and windowing: bert_tf.data.squad on the fixtures and on hand-built contexts."""

import json
import logging
import os
import re

import numpy as np
import pytest

from bert_test_utils import write_word_vocab
from bert_tf.data.squad import (
    SquadDataError,
    SquadExample,
    convert_examples_to_features,
    read_squad_examples,
)
from bert_tf.tokenization import BertTokenizer

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "squad")
V1, V2 = os.path.join(FIXTURES, "train-v1.1.json"), os.path.join(FIXTURES, "train-v2.0.json")


def _tokenizer(tmp_path, examples):
    texts = [e.context for e in examples] + [e.question for e in examples]
    return BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", texts))


def test_reads_v1_and_v2():
    v1 = read_squad_examples(V1)
    assert len(v1) == 16 and not any(e.is_impossible for e in v1)
    first = v1[0]
    assert first.qas_id == "1.1-00" and first.question == "Who designed the Vell Lighthouse?"
    assert first.answers == (("Marguerite Oléron", 108),)
    assert first.context.startswith("The Vell Lighthouse stands")

    v2 = read_squad_examples(V2, version_2_with_negative=True)
    impossible = [e for e in v2 if e.is_impossible]
    assert len(v2) == 22 and len(impossible) == 6
    assert all(e.answers == () for e in impossible)  # plausible_answers are not answers
    with pytest.raises(
        SquadDataError,
        match=r"train-v2\.0\.json: question 2\.0-0n0 is_impossible: .*"
        r"`version_2_with_negative`",
    ):
        read_squad_examples(V2)


def test_missing_file_and_bytes_not_utf8_name_the_file(tmp_path):
    with pytest.raises(SquadDataError, match=rf"^{tmp_path}/dev-v1\.1\.json: no such file$"):
        read_squad_examples(str(tmp_path / "dev-v1.1.json"))
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(
        '{"data": [\n{"paragraphs": [{"context": "Caf\u00e9", "qas": []}]}]}'.encode("latin-1")
    )
    with pytest.raises(
        SquadDataError, match=rf"^{latin1}:2: not UTF-8 \(invalid continuation byte\)$"
    ):
        read_squad_examples(str(latin1))


def test_malformed_json_and_missing_fields_name_the_file(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"data": [{"paragraphs": [}', encoding="utf-8")
    with pytest.raises(SquadDataError, match=rf"^{broken}:1:27: invalid JSON \(Expecting value\)$"):
        read_squad_examples(str(broken))
    no_question = tmp_path / "no_question.json"
    no_question.write_text(
        json.dumps(
            {
                "data": [
                    {
                        "paragraphs": [
                            {
                                "context": "a b",
                                "qas": [
                                    {"id": "q7", "answers": [{"text": "b", "answer_start": 2}]}
                                ],
                            }
                        ]
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        SquadDataError, match=rf"^{no_question}: question q7: missing field 'question'$"
    ):
        read_squad_examples(str(no_question))
    no_answer = tmp_path / "no_answer.json"
    no_answer.write_text(
        json.dumps(
            {
                "data": [
                    {
                        "paragraphs": [
                            {
                                "context": "a b",
                                "qas": [{"id": "q8", "question": "a?", "answers": []}],
                            }
                        ]
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(SquadDataError, match=r"question q8 has no answers"):
        read_squad_examples(str(no_answer))
    assert read_squad_examples(str(no_answer), require_answers=False)[0].answers == ()


def test_questions_without_an_answers_field_need_answers_not_required(tmp_path):
    """A file to predict on may leave out `answers`, as google-research/bert's test input does."""
    path = tmp_path / "questions.json"
    path.write_text(
        json.dumps(
            {
                "data": [
                    {
                        "paragraphs": [
                            {
                                "context": "a b",
                                "qas": [
                                    {"id": "q1", "question": "a?"},
                                    {
                                        "id": "q2",
                                        "question": "b?",
                                        "answers": [{"text": "b", "answer_start": 2}],
                                    },
                                ],
                            }
                        ]
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    examples = read_squad_examples(str(path), require_answers=False)
    assert [(e.qas_id, e.answers) for e in examples] == [("q1", ()), ("q2", ())]
    with pytest.raises(
        SquadDataError,
        match=rf"^{path}: question q1: missing field 'answers' \(training and "
        r"`do_eval` need the gold answers\)$",
    ):
        read_squad_examples(str(path))


def test_answers_are_checked_only_as_far_as_they_are_used(tmp_path):
    """Training needs answers' text and answer_start; scoring, the texts; predicting, nothing."""

    def squad_file(*answers):
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
        path.write_text(
            json.dumps(
                {
                    "data": [
                        {
                            "paragraphs": [
                                {
                                    "context": "a b",
                                    "qas": [
                                        {"id": f"q{i}", "question": "a?", "answers": a}
                                        for i, a in enumerate(answers)
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ),
            encoding="utf-8",
        )
        return str(path)

    no_start, empty, text_start = (
        [{"text": "b"}],
        [{"text": "", "answer_start": 2}],
        [{"text": "b", "answer_start": "2"}],
    )
    assert [
        e.answers
        for e in read_squad_examples(
            squad_file(no_start, empty, text_start, None), require_answers=False
        )
    ] == [()] * 4
    for answers, message in (
        (no_start, "missing field 'answer_start'"),
        (empty, "empty answer text ''"),
        (text_start, "field 'answer_start' is \"2\", not an integer"),
    ):
        with pytest.raises(SquadDataError, match=f"question q0: {re.escape(message)}$"):
            read_squad_examples(squad_file(answers))
    with pytest.raises(SquadDataError, match=r"question q0: field 'answers' is null, not a list$"):
        read_squad_examples(squad_file(None), check_answer_start=False)
    scored = read_squad_examples(squad_file(no_start, empty, text_start), check_answer_start=False)
    assert [e.answers for e in scored] == [(("b", -1),), (("", 2),), (("b", -1),)]
    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", ["a b a?"]))
    features = convert_examples_to_features(
        read_squad_examples(squad_file([{"text": "a b"}]), check_answer_start=False),
        tokenizer,
        max_seq_length=16,
        max_query_length=4,
    )
    # no usable answer_start: [CLS], as for no answer
    assert features.start_positions.tolist() == [0]


def test_training_answers_are_located_in_the_context_or_their_question_skipped(tmp_path, caplog):
    """As google-research/bert: an answer that is the context at its answer_start
    but for whitespace is kept (as the context's slice), a question with no answer
    there is skipped with a warning, and a file with no question left is refused.
    A file that is only scored is not checked: the evaluators use the text."""
    path = tmp_path / "train.json"
    questions = [
        {"id": "spaced", "question": "a?", "answers": [{"text": " a\nb ", "answer_start": 1}]},
        {"id": "off", "question": "c?", "answers": [{"text": "c", "answer_start": 0}]},
        {
            "id": "second",
            "question": "c?",
            "answers": [{"text": "d", "answer_start": 6}, {"text": "c", "answer_start": 7}],
        },
    ]
    path.write_text(
        json.dumps({"data": [{"paragraphs": [{"context": "x a  b c", "qas": questions}]}]}),
        encoding="utf-8",
    )
    assert [e.answers for e in read_squad_examples(str(path), check_answer_start=False)] == [
        ((" a\nb ", 1),),
        (("c", 0),),
        (("d", 6), ("c", 7)),
    ]
    summary = (
        f"{path}: skipped 1 of 3 questions whose answer is not in the context at its "
        "answer_start, e.g. question off: answer_start 0 gives 'x', not the answer text 'c'"
    )
    with caplog.at_level(logging.INFO, logger="absl"):
        examples = read_squad_examples(str(path))
    assert [(e.qas_id, e.answers) for e in examples] == [
        ("spaced", (("a  b", 2),)),
        ("second", (("c", 7),)),
    ]
    assert caplog.messages == [summary]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="absl"):  # --verbose_logging: also each case
        assert read_squad_examples(str(path), verbose_logging=True) == examples
    assert caplog.messages == [
        f"{path}: question spaced: answer ' a\\nb ' at "
        "answer_start 1 is taken as the context's 'a  b' at 2",
        f"{path}: skipped question off: answer_start 0 gives 'x', not the answer text 'c'",
        f"{path}: question second: answer 'd' at answer_start 6 is left out",
        summary,
    ]
    for start in (-1, 3, 99):  # before the context, at its end, past it
        path.write_text(
            json.dumps(
                {
                    "data": [
                        {
                            "paragraphs": [
                                {
                                    "context": "a b",
                                    "qas": [
                                        {
                                            "id": "q1",
                                            "question": "a?",
                                            "answers": [{"text": "a", "answer_start": start}],
                                        }
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ),
            encoding="utf-8",
        )
        with pytest.raises(
            SquadDataError,
            match=rf"^{path}: no question has its answer in the context at its "
            rf"answer_start, e.g. question q1: answer_start {start} is not a "
            r"character offset$",
        ):
            read_squad_examples(str(path))


def test_long_context_windows_positions_and_max_context(tmp_path):
    # 40 one-token words; [CLS] q [SEP] ... [SEP] in 20 leaves 16 context tokens a window.
    context = " ".join(f"w{i}" for i in range(40))
    answer = "w20 w21"
    examples = [
        SquadExample("a", "q", context, ((answer, context.index(answer)),)),
        SquadExample("n", "q", context, (), is_impossible=True),
    ]
    tokenizer = _tokenizer(tmp_path, examples)
    features = convert_examples_to_features(
        examples, tokenizer, max_seq_length=20, doc_stride=6, max_query_length=4
    )
    # Windows start at tokens 0, 6, 12, 18, 24 (24 + 16 reaches the end), for each question.
    np.testing.assert_array_equal(features.example_index, [0] * 5 + [1] * 5)
    first_tokens = [features.token_char_start[f, 3] for f in range(5)]
    assert [context[s:].split()[0] for s in first_tokens] == ["w0", "w6", "w12", "w18", "w24"]
    ids = features.inputs["input_word_ids"]
    w20, w21 = tokenizer.convert_tokens_to_ids(["w20", "w21"])
    # The answer (tokens 20-21) lies wholly in the windows
    # starting at 6, 12 and 18, at 3 + 20 - start.
    np.testing.assert_array_equal(features.start_positions, [0, 17, 11, 5, 0] + [0] * 5)
    np.testing.assert_array_equal(features.end_positions, [0, 18, 12, 6, 0] + [0] * 5)
    for f in (1, 2, 3):
        assert (ids[f, features.start_positions[f]], ids[f, features.end_positions[f]]) == (
            w20,
            w21,
        )
        assert (
            context[
                features.token_char_start[f, features.start_positions[f]] : features.token_char_end[
                    f, features.end_positions[f]
                ]
            ]
            == answer
        )
    # Token 20 has the most context (7 tokens either side) in the window starting at 12.
    np.testing.assert_array_equal(
        features.token_is_max_context[:5, :][np.arange(5), [0, 17, 11, 5, 0]],
        [False, False, True, False, False],
    )
    # Every context token is the max-context token of exactly one window.
    assert features.token_is_max_context[:5].sum() == 40
    np.testing.assert_array_equal(features.inputs["input_type_ids"][0, :4], [0, 0, 0, 1])
    is_sep = features.inputs["input_word_ids"] == tokenizer.vocab.sep_id
    assert (features.token_char_start[is_sep] == -1).all()


def test_question_is_cut_to_max_query_length(tmp_path):
    examples = [SquadExample("a", "one two three four five six", "seven eight", (("eight", 6),))]
    tokenizer = _tokenizer(tmp_path, examples)
    features = convert_examples_to_features(
        examples, tokenizer, max_seq_length=12, max_query_length=3
    )
    tokens = tokenizer.convert_ids_to_tokens(features.inputs["input_word_ids"][0])
    assert tokens == [
        "[CLS]",
        "one",
        "two",
        "three",
        "[SEP]",
        "seven",
        "eight",
        "[SEP]",
        "[PAD]",
        "[PAD]",
        "[PAD]",
        "[PAD]",
    ]
    assert (features.start_positions[0], features.end_positions[0]) == (6, 6)


def test_offsets_give_back_exact_answers_and_impossible_points_at_cls(tmp_path):
    examples = read_squad_examples(V2, version_2_with_negative=True)
    features = convert_examples_to_features(
        examples,
        _tokenizer(tmp_path, examples),
        max_seq_length=64,
        doc_stride=16,
        max_query_length=16,
    )
    found = set()
    for f, example in enumerate(features.example_index):
        ex = examples[example]
        start, end = features.start_positions[f], features.end_positions[f]
        if ex.is_impossible:
            assert start == end == 0
        elif start:
            assert (
                ex.context[features.token_char_start[f, start] : features.token_char_end[f, end]]
                == ex.answers[0][0]
            )
            found.add(ex.qas_id)
    # Every answer is in some window, accents and punctuation
    # included ("Marguerite Oléron", "José Ibarra").
    assert found == {e.qas_id for e in examples if not e.is_impossible}
    assert len(features) > len(examples)  # long contexts gave several windows


QUESTION = {"id": "q1", "question": "a?", "answers": [{"text": "b", "answer_start": 2}]}


@pytest.mark.parametrize(
    "article, message",
    [
        ({"paragraphs": 5}, "article 0: field 'paragraphs' is 5, not a list"),
        (
            {"paragraphs": [{"context": "a b", "qas": None}]},
            "article 0 paragraph 0: field 'qas' is null, not a list",
        ),
        (
            {"paragraphs": [{"context": None, "qas": [QUESTION]}]},
            "article 0 paragraph 0: field 'context' is null, not a string",
        ),
        (
            {"paragraphs": [{"context": "a b", "qas": [{**QUESTION, "question": None}]}]},
            "question q1: field 'question' is null, not a string",
        ),
        (
            {"paragraphs": [{"context": "a b", "qas": [{**QUESTION, "is_impossible": "false"}]}]},
            "question q1: field 'is_impossible' is \"false\", not true or false",
        ),
        (
            {"paragraphs": [{"context": "a \ud800 b", "qas": [QUESTION]}]},
            "article 0 paragraph 0: field 'context' holds '\\ud800' at character 2, a lone UTF-16 "
            "surrogate, not a character",
        ),
        (
            {
                "paragraphs": [
                    {"context": "a b", "qas": [QUESTION]},
                    {"context": "c b", "qas": [QUESTION]},
                ]
            },
            "question q1: duplicate id (also in article 0 paragraph 0)",
        ),
    ],
)
def test_wrong_types_and_duplicate_ids_name_the_file_and_question(tmp_path, article, message):
    path = tmp_path / "train.json"
    path.write_text(json.dumps({"data": [article]}), encoding="utf-8")
    for require_answers in (True, False):
        with pytest.raises(SquadDataError) as error:
            read_squad_examples(
                str(path), version_2_with_negative=True, require_answers=require_answers
            )
        assert str(error.value) == f"{path}: {message}"
