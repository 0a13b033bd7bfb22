"""SWAG (Zellers et al., 2018) multiple-choice data: the CSV files, read and encoded.

Each row gives a context (`sent1`), the start of the next sentence (`sent2`) and
four endings; choice i is `sent2 + " " + ending_i`, and the model scores the
pairs (context, choice). `train.csv` and `val.csv` carry a `label` column (the
right ending, 0..3); `test.csv` has none.

Example:
>>> examples = read_swag("val.csv")
>>> examples[0].context, examples[0].choices
('She opened the door.', ['She walked in.', 'She ate the door.', 'She sat down.', 'She wrote it.'])
>>> features, labels = encode_swag(examples, BertTokenizer("vocab.txt"), seq_length=16)
>>> features["input_word_ids"].shape, labels
((1, 4, 16), array([0], dtype=int32))
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from bert_tf import text_files
from bert_tf.errors import UserInputError
from bert_tf.tokenization import BertTokenizer

NUM_CHOICES = 4
ENDING_COLUMNS = tuple(f"ending{i}" for i in range(NUM_CHOICES))
REQUIRED_COLUMNS = ("sent1", "sent2") + ENDING_COLUMNS
LABEL_COLUMN = "label"
_ENCODE_CHUNK = 4096  # examples tokenized and packed per call, to bound peak memory


class SwagError(UserInputError):
    """A SWAG file that cannot be read, with the file and line named."""


@dataclasses.dataclass(frozen=True)
class SwagExample:
    """One SWAG row: `example_id` is the CSV's unnamed first (pandas index) column, else the
    row's number from 0 (`read_swag`)."""

    example_id: str
    context: str
    start: str
    endings: tuple[str, ...]
    label: int | None

    @property
    def choices(self) -> list[str]:
        """The second segment of each pair: `start + " " + ending_i`."""
        return [f"{self.start} {ending}".strip() for ending in self.endings]


def _parse_label(value: str, where: str) -> int:
    try:
        label = int(value)
    except ValueError:
        raise SwagError(f"{where}: label {value!r} is not an integer") from None
    if not 0 <= label < NUM_CHOICES:
        raise SwagError(f"{where}: label {label} is outside 0..{NUM_CHOICES - 1}")
    return label


def read_swag(path: str | os.PathLike) -> list[SwagExample]:
    """Reads a SWAG CSV (header row first); labels are read when the header has `label`.

    The ids are the first column's values when its header is empty (the pandas index the
    SWAG files carry), else the rows' numbers from 0: a first column such as `video-id`
    repeats across rows.

    Raises:
        SwagError: one line naming the file, or `file:line`: a missing file, bytes that are
            not UTF-8, a header without the needed columns, a row whose field count differs
            from the header's, an unparsable CSV record, a label that is not an integer in 0..3.
    """
    path = os.fspath(path)
    rows = text_files.read_rows(path, SwagError, strict=True)
    if not rows:
        raise SwagError(f"{path}:1: empty file, expected a header row")
    header_line, header = rows[0]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise SwagError(f"{path}:{header_line}: header lacks the column(s) {', '.join(missing)}")
    column = {name: header.index(name) for name in header}
    has_labels = LABEL_COLUMN in column
    has_index = header[0] == ""
    examples = []
    for line, row in rows[1:]:
        where = f"{path}:{line}"
        if len(row) != len(header):
            raise SwagError(
                f"{where}: malformed row: {len(row)} fields, the header has {len(header)}"
            )
        examples.append(
            SwagExample(
                example_id=row[0] if has_index and row[0] else str(len(examples)),
                context=row[column["sent1"]],
                start=row[column["sent2"]],
                endings=tuple(row[column[name]] for name in ENDING_COLUMNS),
                label=_parse_label(row[column[LABEL_COLUMN]], where) if has_labels else None,
            )
        )
    return examples


def encode_swag(examples: list[SwagExample], tokenizer: BertTokenizer, seq_length: int):
    """Examples -> (features, labels).

    features: int32 `input_word_ids`, `input_mask`, `input_type_ids`, each
    `[n, NUM_CHOICES, seq_length]`: `[CLS] context [SEP] choice [SEP]`, cut round robin.
    labels: int32 `[n]`, or None when any example has no label (a test file).
    """
    chunks = []
    for begin in range(0, max(len(examples), 1), _ENCODE_CHUNK):  # no examples: one empty chunk
        chunk = examples[begin : begin + _ENCODE_CHUNK]
        contexts = [example.context for example in chunk for _ in range(NUM_CHOICES)]
        choices = [choice for example in chunk for choice in example.choices]
        # each [len(chunk) * NUM_CHOICES, seq_length]
        packed = tokenizer.pack_inputs(
            [tokenizer.tokenize(contexts), tokenizer.tokenize(choices)], seq_length
        )
        chunks.append(
            {
                name: value.numpy().reshape(len(chunk), NUM_CHOICES, seq_length)
                for name, value in packed.items()
            }
        )
    features = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
    if any(example.label is None for example in examples):
        return features, None
    return features, np.array([example.label for example in examples], np.int32)
