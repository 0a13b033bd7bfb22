"""SQuAD v1.1 / v2.0: JSON files -> examples -> windowed model features.

Windows follow google-research/bert's `run_squad.py`: the question (cut to
`max_query_length` tokens), then `[SEP]`, then a window of the context; long
contexts give several windows `doc_stride` tokens apart, and each context
token is marked "max context" in the one window where it has the most tokens
on both sides. Answers are located through the tokenizer's character offsets
into the original context, so that a predicted span maps back to an exact
slice of the original text (accents, punctuation and spacing kept).

Example:
>>> from bert_tf.tokenization import BertTokenizer
>>> examples = read_squad_examples("dev-v1.1.json")
>>> examples[0].question, examples[0].answers
('Who wrote it?', (('Ann', 18),))
>>> features = convert_examples_to_features(examples, BertTokenizer("vocab.txt"), max_seq_length=32,
...                                         max_query_length=8)
>>> features.inputs["input_word_ids"].shape
(1, 32)
>>> (features.start_positions,  # "Ann" is token 10: [CLS] who wrote it ? [SEP] it ...
...  features.end_positions)
(array([10], dtype=int32), array([10], dtype=int32))
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import text_files
from bert_tf.data.doc_stride import context_score, window_spans
from bert_tf.errors import UserInputError


class SquadDataError(UserInputError):
    """A SQuAD file that cannot be used; the message names the file and the question id."""


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One question on one context; `answers` are (text, answer_start) pairs, in characters."""

    qas_id: str
    question: str
    context: str
    answers: tuple[tuple[str, int], ...] = ()
    is_impossible: bool = False


@dataclasses.dataclass
class SquadFeatures:
    """Model windows of a list of examples, `n` windows of `seq` tokens.

    `inputs`: int32 `input_word_ids`, `input_mask`, `input_type_ids` `[n, seq]`.
    `start_positions`, `end_positions`: int32 `[n]`, the answer's first and last
    token in the window, or 0 (`[CLS]`) if the window does not hold it.
    `example_index`: int32 `[n]`, the example each window comes from.
    `token_char_start`, `token_char_end`: int32 `[n, seq]`, each context token's
    span `context[start:end]` in its example's context; -1 for other tokens.
    `token_is_max_context`: bool `[n, seq]`.
    """

    inputs: dict[str, np.ndarray]
    start_positions: np.ndarray
    end_positions: np.ndarray
    example_index: np.ndarray
    token_char_start: np.ndarray
    token_char_end: np.ndarray
    token_is_max_context: np.ndarray

    def __len__(self) -> int:
        return len(self.example_index)


def read_squad_examples(
    path: str,
    version_2_with_negative: bool = False,
    require_answers: bool = True,
    check_answer_start: bool = True,
    verbose_logging: bool = False,
) -> list[SquadExample]:
    """Reads a SQuAD JSON file (`{"data": [{"paragraphs": [{"context", "qas"}]}]}`).

    With `check_answer_start` (a training file, whose answers become token positions),
    each answer becomes the slice of the context at its `answer_start` that equals its text,
    or equals it but for whitespace (as google-research/bert matches them). A question none
    of whose answers is there is skipped with a warning, as google-research/bert skips it;
    a file with no question left is refused. Of a file that is only scored, only the answer
    texts are read, as the official evaluators read them (an `answer_start` that is not an
    integer becomes -1: no training position). A question marked `is_impossible` needs
    `version_2_with_negative`; with `require_answers`, any other question needs at least
    one answer; without it (a file only predicted on) answers are not read at all, as
    google-research/bert reads them only for training. With `verbose_logging`
    (--verbose_logging), each skipped question is logged, and each answer of a kept one
    that is taken with the context's whitespace or left out.
    """
    data = text_files.read_json(path, SquadDataError)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise SquadDataError(f'{path}: not a SQuAD file: expected an object with a "data" list')
    examples, seen, unlocated = [], {}, []
    for a, article in enumerate(data["data"]):
        for p, paragraph in enumerate(_field(article, "paragraphs", path, f"article {a}", list)):
            where = f"article {a} paragraph {p}"
            context = _field(paragraph, "context", path, where, str)
            for qa in _field(paragraph, "qas", path, where, list):
                qas_id = str(_field(qa, "id", path, where, (str, int)))
                if qas_id in seen:
                    raise SquadDataError(
                        f"{path}: question {qas_id}: duplicate id (also in {seen[qas_id]})"
                    )
                seen[qas_id] = where
                try:
                    examples.append(
                        _read_question(
                            qa,
                            qas_id,
                            context,
                            path,
                            version_2_with_negative,
                            require_answers,
                            check_answer_start,
                            verbose_logging,
                        )
                    )
                except _AnswerNotInContext as skipped:
                    unlocated.append(str(skipped))
                    if verbose_logging:
                        logging.warning("%s: skipped %s", path, skipped)
    if unlocated:
        _skip_unlocated(path, unlocated, len(examples))
    return examples


def _skip_unlocated(path: str, unlocated: list[str], num_kept: int) -> None:
    """Warns of the training questions skipped for answers not in their context (`unlocated`: why,
    one per question); refuses a file that has none left."""
    if not num_kept:
        raise SquadDataError(
            f"{path}: no question has its answer in the context at its answer_start, "
            f"e.g. {unlocated[0]}"
        )
    logging.warning(
        "%s: skipped %d of %d questions whose answer is not in the context at its answer_start, "
        "e.g. %s",
        path,
        len(unlocated),
        len(unlocated) + num_kept,
        unlocated[0],
    )


_TYPE_NAMES = {list: "a list", str: "a string", bool: "true or false", int: "an integer"}


def _field(record, key, path, where, types, default=None):
    """`record[key]`, which must be of `types` (a type or a tuple); a missing key gives `default`
    where one is given. Raises `SquadDataError` naming the file, `where` and the field."""
    if default is not None and isinstance(record, dict) and key not in record:
        return default
    if not isinstance(record, dict) or key not in record:
        raise SquadDataError(f"{path}: {where}: missing field {key!r}")
    value, types = record[key], types if isinstance(types, tuple) else (types,)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        expected = " or ".join(_TYPE_NAMES[t] for t in types)
        raise SquadDataError(
            f"{path}: {where}: field {key!r} is {json.dumps(value)[:40]}, not {expected}"
        )
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            # JSON's "\ud800" escape: a lone surrogate, no character
            raise SquadDataError(
                f"{path}: {where}: field {key!r} holds {value[error.start]!r} at character "
                f"{error.start}, a lone UTF-16 surrogate, not a character"
            ) from None
    return value


def _read_question(
    qa,
    qas_id,
    context,
    path,
    version_2_with_negative,
    require_answers,
    check_answer_start,
    verbose_logging,
):
    where = f"question {qas_id}"
    question = _field(qa, "question", path, where, str)
    is_impossible = _field(qa, "is_impossible", path, where, bool, default=False)
    if is_impossible and not version_2_with_negative:
        raise SquadDataError(
            f"{path}: {where} is_impossible: SQuAD 2.0 data needs `version_2_with_negative`"
        )
    # as google-research/bert, which reads answers only for training
    if is_impossible or not require_answers:
        raw_answers = []
    else:
        if "answers" not in qa:
            raise SquadDataError(
                f"{path}: {where}: missing field 'answers' (training and "
                "`do_eval` need the gold answers)"
            )
        raw_answers = _field(qa, "answers", path, where, list)
    answers = []
    for answer in raw_answers:
        text = _field(answer, "text", path, where, str)
        if check_answer_start:
            if not text.strip():
                raise SquadDataError(f"{path}: {where}: empty answer text {text!r}")
            answers.append((text, _field(answer, "answer_start", path, where, int)))
        else:
            # scored on its text alone, as the official evaluators read it; -1: no usable
            # answer_start
            start = answer.get("answer_start")
            answers.append((text, start if type(start) is int else -1))
    if require_answers and not is_impossible and not answers:
        raise SquadDataError(f"{path}: {where} has no answers and is not is_impossible")
    if check_answer_start and answers:
        located = _located_answers(answers, context, f"{path}: {where}", verbose_logging)
        if not located:
            text, start = answers[0]
            found = (
                f"gives {context[start : start + len(text)]!r}, not the answer text {text!r}"
                if 0 <= start < len(context)
                else "is not a character offset"
            )
            raise _AnswerNotInContext(f"{where}: answer_start {start} {found}")
        answers = located
    return SquadExample(qas_id, question, context, tuple(answers), is_impossible)


def _located_answers(
    answers, context: str, where: str, verbose_logging: bool
) -> list[tuple[str, int]]:
    """The `answers` that `_located_answer` finds in `context`, as it gives them; with
    `verbose_logging`, where some are found, logs each that it changed (whitespace) or left out."""
    located = [_located_answer(text, start, context) for text, start in answers]
    if verbose_logging and any(located):
        for (text, start), answer in zip(answers, located):
            if answer != (text, start):
                change = (
                    f"is taken as the context's {answer[0]!r} at {answer[1]}"
                    if answer
                    else "is left out"
                )
                logging.info("%s: answer %r at answer_start %d %s", where, text, start, change)
    return [answer for answer in located if answer]


class _AnswerNotInContext(Exception):
    """A training question none of whose answers is in its context at the answer's answer_start."""


def _located_answer(text: str, start: int, context: str) -> tuple[str, int] | None:
    """(the slice of `context` from `start` that is `text`, or `text` but for whitespace, its
    start), or None where there is none: the answer as training locates it in the context."""
    if not 0 <= start < len(context):
        return None
    if context.startswith(text, start):
        return text, start
    first, end = None, start
    for char in "".join(text.split()):
        while end < len(context) and context[end].isspace():
            end += 1
        if end == len(context) or context[end] != char:
            return None
        first = end if first is None else first
        end += 1
    return context[first:end], first


def convert_examples_to_features(
    examples,
    tokenizer,
    max_seq_length: int = 384,
    doc_stride: int = 128,
    max_query_length: int = 64,
) -> SquadFeatures:
    """Examples -> `SquadFeatures`: `[CLS] question [SEP] context window [SEP]`, padded.

    All contexts (each distinct one once) and all questions are tokenized in one
    batched call each. Training positions come from each example's first answer.
    """
    if max_seq_length - max_query_length - 3 < 1:
        raise UserInputError(
            f"`max_seq_length`={max_seq_length} leaves no room for the context "
            f"after `max_query_length`={max_query_length} and [CLS]/[SEP]/[SEP]"
        )
    if doc_stride < 1:
        raise UserInputError(f"`doc_stride` must be positive, got {doc_stride}")
    if not examples:
        raise UserInputError("no SQuAD questions to convert")
    contexts = list(dict.fromkeys(e.context for e in examples))
    context_row = {c: i for i, c in enumerate(contexts)}
    ids, starts, ends = tokenizer.tokenize_with_offsets(contexts, unit="UTF8_CHAR")
    splits = ids.row_splits.numpy()
    ids, starts, ends = (t.flat_values.numpy() for t in (ids, starts, ends))
    questions = tokenizer.tokenize([e.question for e in examples])[:, :max_query_length]
    query_lengths = questions.row_lengths().numpy()

    token_index, is_max_context, lengths, example_index, answers = [], [], [], [], []
    for i, example in enumerate(examples):
        lo, hi = splits[context_row[example.context]], splits[context_row[example.context] + 1]
        window_starts, window_lengths = window_spans(
            hi - lo, max_seq_length - query_lengths[i] - 3, doc_stride
        )
        max_context = _max_context(window_starts, window_lengths, hi - lo)  # [w, tokens]
        for j, (first, n) in enumerate(zip(window_starts, window_lengths)):
            token_index.append(lo + first + np.arange(n))
            is_max_context.append(max_context[j, first : first + n])
        span = (
            None
            if example.is_impossible or not example.answers or example.answers[0][1] < 0
            else _answer_tokens(example.answers[0], starts[lo:hi], ends[lo:hi])
        )
        answers.append(_window_answer(span, window_starts, window_lengths))
        lengths.append(window_lengths)
        example_index.append(np.full(len(window_starts), i, np.int32))
    example_index, lengths = np.concatenate(example_index), np.concatenate(lengths)
    token_index = np.concatenate(token_index)  # [total context tokens over all windows]
    window_ids = tf.RaggedTensor.from_row_lengths(ids[token_index], lengths)
    inputs = tokenizer.pack_inputs(
        [tf.gather(questions, example_index), window_ids], max_seq_length
    )
    inputs = {name: value.numpy() for name, value in inputs.items()}

    # Context token t of window f sits at column offset[f] + t: after [CLS] question [SEP].
    offset = query_lengths[example_index] + 2  # [n]
    window = np.repeat(np.arange(len(lengths)), lengths)  # [total]
    column = (
        offset[window]
        + np.arange(len(token_index))
        - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    shape = (len(lengths), max_seq_length)
    features = SquadFeatures(
        inputs,
        *(_to_columns(a, offset) for a in np.concatenate(answers, axis=1)),
        example_index,
        np.full(shape, -1, np.int32),
        np.full(shape, -1, np.int32),
        np.zeros(shape, bool),
    )
    features.token_char_start[window, column] = starts[token_index]
    features.token_char_end[window, column] = ends[token_index]
    features.token_is_max_context[window, column] = np.concatenate(is_max_context)
    return features


def _to_columns(position, offset):
    """Context positions `[n]` (-1: not in the window) -> int32 input columns, 0 for `[CLS]`."""
    return np.where(position >= 0, position + offset, 0).astype(np.int32)


def _max_context(window_starts, lengths, num_tokens: int) -> np.ndarray:
    """bool `[w, num_tokens]`: token t has its maximum context in window w.

    A token's score in a window is its `context_score`; the first window with the
    best score wins, as in google-research/bert.
    """
    token = np.arange(num_tokens)[None, :]
    first, last = window_starts[:, None], (window_starts + lengths - 1)[:, None]
    score = np.where(
        (token >= first) & (token <= last), context_score(token - first, lengths[:, None]), -np.inf
    )
    return np.arange(len(window_starts))[:, None] == np.argmax(score, axis=0)[None, :]


def _answer_tokens(answer, starts, ends):
    """(first, last) context tokens overlapping the answer's characters, or None if none does."""
    text, char_start = answer
    first = np.searchsorted(ends, char_start, side="right")  # first token ending after the start
    # last starting before the end
    last = np.searchsorted(starts, char_start + len(text), side="left") - 1
    return (int(first), int(last)) if first <= last else None


def _window_answer(span, window_starts, window_lengths) -> np.ndarray:
    """`[2, w]` context-relative (start, end) per window; -1 where it lacks part of the answer."""
    if span is None:
        return np.full((2, len(window_starts)), -1)
    inside = (span[0] >= window_starts) & (span[1] < window_starts + window_lengths)
    return np.where(inside, np.array(span)[:, None] - window_starts, -1)
