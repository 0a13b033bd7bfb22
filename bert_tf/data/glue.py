"""Sentence(-pair) classification data: GLUE's tasks, XNLI, users' CSV/TSV files; their encoding.

`data_dir` is one task's folder of the official GLUE download (`glue_data/MRPC`,
as google-research/bert's `--data_dir`), XNLI's folder (`XnliProcessor`), or a
folder with `train`, `dev` and `test` `.csv`/`.tsv` files for the generic task.

Example (`dev.tsv` in SST-2's layout: a `sentence` and a `label` column):
>>> from bert_tf.tokenization import BertTokenizer
>>> processor = get_processor("SST-2")
>>> processor.labels("."), processor.eval_splits
(('0', '1'), ('dev',))
>>> examples = processor.read(".", "dev")
>>> features, labels = encode_examples(
...     BertTokenizer("vocab.txt"), examples, processor.labels("."), 8)
>>> features["input_word_ids"].shape, labels.tolist()
((2, 8), [1, 0])
"""

from __future__ import annotations

import abc
import csv
import dataclasses
import math
import sys
import typing
from collections.abc import Sequence

import numpy as np

from bert_tf import text_files
from bert_tf.errors import UserInputError

csv.field_size_limit(sys.maxsize)  # GLUE parse-tree columns and users' long documents


class DataError(UserInputError):
    """Unusable task data; the one-line message names the file and line."""


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One example: its id, one or two texts, and its label (None in test files).

    `guid` is the file's id column where it has one (the index a GLUE submission
    names), else `<split>-<row>` with the 0-based data row. `label` is the label
    string, or the float score of a regression task.
    """

    guid: str
    text_a: str
    text_b: str | None = None
    label: str | float | None = None


class DataProcessor(abc.ABC):
    """A task's files: their names, columns, label set, and which splits evaluate or predict."""

    eval_splits: tuple[str, ...] = ("dev",)
    predict_splits: tuple[str, ...] = ("test",)
    is_regression: bool = False

    @abc.abstractmethod
    def labels(self, data_dir: str) -> tuple[str, ...] | None:
        """The label strings in id order; None for a regression task."""

    @abc.abstractmethod
    def file_name(self, split: str) -> str:
        """The split's file name inside `data_dir`, e.g. `train.tsv`."""

    @abc.abstractmethod
    def read(
        self, data_dir: str, split: str, labels: Sequence[str] | None = None
    ) -> list[InputExample]:
        """The split's examples; raises `DataError` naming `file:line` on bad data.

        Labels must be among `labels` (the task's, in id order; default `self.labels(data_dir)`),
        except in a csv/tsv training file, which defines them.
        """


@dataclasses.dataclass(frozen=True)
class Columns:
    """Where a TSV keeps its fields (0-based; negative counts from the row's end)."""

    text_a: int
    text_b: int | None = None
    label: int | None = None
    index: int | None = None
    header: bool = True

    @property
    def min_columns(self) -> int:
        used = [c for c in (self.text_a, self.text_b, self.label, self.index) if c is not None]
        needed = max(c + 1 for c in used if c >= 0)
        # a column counted from the end lies past the others
        return needed + sum(1 for c in used if c < 0)

    def example(
        self, row: list[str], guid: str, label_set: tuple[str, ...] | None, path: str, line: int
    ) -> InputExample:
        """The row's example (`guid` without an index column), its label checked in `label_set`."""
        label = None if self.label is None else _check_label(row[self.label], label_set, path, line)
        return InputExample(
            guid if self.index is None else row[self.index],
            row[self.text_a],
            None if self.text_b is None else row[self.text_b],
            label,
        )


@dataclasses.dataclass(frozen=True)
class GlueProcessor(DataProcessor):
    """One GLUE task: its official TSV layout (QUOTE_NONE), labels and submission file names."""

    name: str  # the task folder and submission name, e.g. "MRPC"
    label_list: tuple[str, ...] | None  # None: regression (STS-B)
    labeled: Columns  # train and dev files
    test: Columns
    eval_splits: tuple[str, ...] = ("dev",)
    predict_splits: tuple[str, ...] = ("test",)
    submission_names: tuple[str, ...] = ()  # one per predict split; default `<name>.tsv`

    @property
    def is_regression(self) -> bool:
        return self.label_list is None

    def labels(self, data_dir: str) -> tuple[str, ...] | None:
        return self.label_list

    def file_name(self, split: str) -> str:
        return f"{split}.tsv"

    def submission_name(self, split: str) -> str:
        names = self.submission_names or (f"{self.name}.tsv",)
        return names[self.predict_splits.index(split)]

    def read(
        self, data_dir: str, split: str, labels: Sequence[str] | None = None
    ) -> list[InputExample]:
        path = _split_path(data_dir, self.file_name(split))
        columns = self.test if split in self.predict_splits else self.labeled
        label_set = self.label_list if labels is None else tuple(labels)
        rows = _read_tsv(path, columns, self.name)
        return [
            columns.example(row, f"{split}-{i}", label_set, path, line)
            for i, (line, row) in enumerate(rows)
        ]


@dataclasses.dataclass(frozen=True)
class XnliProcessor(DataProcessor):
    """XNLI in one language, as google-research/bert's `XnliProcessor` reads it (`--xnli_language`).

    `data_dir` holds XNLI-MT-1.0's machine-translated MultiNLI training file
    `multinli/multinli.train.<language>.tsv` (premise, hypothesis, label; its `contradictory`
    is read as `contradiction`) and XNLI-1.0's `xnli.dev.tsv` and `xnli.test.tsv`, whose rows
    of the other 14 languages are skipped. The test file's gold labels are not read: it predicts.

    Example:
    >>> XnliProcessor("de").file_name("train"), XnliProcessor("de").file_name("test")
    ('multinli/multinli.train.de.tsv', 'xnli.test.tsv')
    """

    language: str = "zh"
    name: typing.ClassVar[str] = "XNLI"
    label_list: typing.ClassVar[tuple[str, ...]] = ("contradiction", "entailment", "neutral")

    def labels(self, data_dir: str) -> tuple[str, ...]:
        return self.label_list

    def file_name(self, split: str) -> str:
        return (
            f"multinli/multinli.train.{self.language}.tsv"
            if split == "train"
            else f"xnli.{split}.tsv"
        )

    def read(
        self, data_dir: str, split: str, labels: Sequence[str] | None = None
    ) -> list[InputExample]:
        path = _split_path(data_dir, self.file_name(split))
        columns = _XNLI_COLUMNS[split]
        rows = _read_tsv(path, columns, self.name)
        if split == "train":
            rows = [
                (line, _renamed_label(row, columns.label, _XNLI_TRAIN_LABELS)) for line, row in rows
            ]
        else:
            rows = self._in_language(rows, path)
        label_set = self.label_list if labels is None else tuple(labels)
        return [
            columns.example(row, f"{split}-{i}", label_set, path, line)
            for i, (line, row) in enumerate(rows)
        ]

    def _in_language(
        self, rows: list[tuple[int, list[str]]], path: str
    ) -> list[tuple[int, list[str]]]:
        """The rows in `self.language`; an error if the file has rows but none in that language."""
        kept = [(line, row) for line, row in rows if row[_XNLI_LANGUAGE] == self.language]
        if rows and not kept:
            found = sorted({row[_XNLI_LANGUAGE] for _, row in rows})
            raise DataError(
                f"{path}: no rows in the language {self.language!r} (`xnli_language`); "
                f"the file has {', '.join(found)}"
            )
        return kept


@dataclasses.dataclass(frozen=True)
class DelimitedFileProcessor(DataProcessor):
    """Users' own data: `train`/`dev`/`test` files with a header row naming the columns.

    The label set is the sorted set of the training file's labels, none of them blank.
    The test file may lack the label column, or leave it empty in every row.

    Example:
    >>> processor = DelimitedFileProcessor("csv", text_a_column="review", label_column="stars")
    >>> processor.file_name("train")
    'train.csv'
    """

    extension: str  # "csv" or "tsv"
    text_a_column: str = "text"
    text_b_column: str | None = None
    label_column: str = "label"

    def labels(self, data_dir: str) -> tuple[str, ...]:
        examples = self.read(data_dir, "train")
        labels = tuple(sorted({e.label for e in examples}))
        path = _split_path(data_dir, self.file_name("train"))
        if not labels:
            raise DataError(f"{path}: no training examples to read the label set from")
        if len(labels) == 1:
            raise DataError(
                f"{path}: every example has the label {labels[0]!r}; "
                "classification needs at least two labels"
            )
        if all(_is_number(label) for label in labels) and not all(
            float(label).is_integer() for label in labels
        ):
            raise DataError(
                f"{path}: the labels are scores ({', '.join(labels[:3])}, ...), not classes: the "
                f"{self.extension} task classifies (of the "
                "regression tasks, only STS-B's is supported)"
            )
        return labels

    def file_name(self, split: str) -> str:
        return f"{split}.{self.extension}"

    def read(
        self, data_dir: str, split: str, labels: Sequence[str] | None = None
    ) -> list[InputExample]:
        path = _split_path(data_dir, self.file_name(split))
        # CSV fields may be quoted, as pandas and spreadsheets write them when they hold a quote,
        # a comma or a line break. TSV has no quote character, as google-research/bert reads it
        # (csv.reader(..., quotechar=None)): a row may start with a quote, and no field holds a tab.
        if self.extension == "csv":
            rows = text_files.read_rows(path, DataError, delimiter=",", strict=True)
        else:
            rows = text_files.read_rows(path, DataError, delimiter="\t", quoting=csv.QUOTE_NONE)
        if not rows:
            raise DataError(f"{path}:1: empty file; the first row must name the columns")
        header_line, header = rows[0]

        def position(flag: str, name: str | None, required: bool = True) -> int | None:
            if name is None or (name not in header and not required):
                return None
            if name not in header:
                raise DataError(
                    f"{path}:{header_line}: no column {name!r} ({flag}) in the header "
                    f"{', '.join(header)}"
                )
            return header.index(name)

        text_a = position("`text_a_column`", self.text_a_column)
        text_b = position("`text_b_column`", self.text_b_column)
        label = position(
            "`label_column`", self.label_column, required=split not in self.predict_splits
        )
        data = rows[1:]
        for line, row in data:
            if len(row) != len(header):
                raise DataError(
                    f"{path}:{line}: malformed {self.extension.upper()} row: {len(row)} columns, "
                    f"the header names {len(header)}"
                )
        if (
            split in self.predict_splits
            and label is not None
            and all(not row[label].strip() for _, row in data)
        ):
            label = None  # a label column left empty in every row, as pandas writes unlabelled data
        label_set = None
        if split != "train" and label is not None:
            label_set = self.labels(data_dir) if labels is None else tuple(labels)
        examples = []
        for row_number, (line, row) in enumerate(data):
            value = None if label is None else row[label]
            if split == "train" and not value.strip():
                raise DataError(
                    f"{path}:{line}: empty label in the column "
                    f"{self.label_column!r} (`label_column`)"
                )
            if label_set is not None:
                value = _check_label(value, label_set, path, line)
            examples.append(
                InputExample(
                    f"{split}-{row_number}",
                    row[text_a],
                    None if text_b is None else row[text_b],
                    value,
                )
            )
        return examples


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _labeled(text_a, text_b=None, label=-1, index=None, header=True) -> Columns:
    return Columns(text_a, text_b, label, index, header)


def _unlabeled(text_a, text_b=None) -> Columns:
    return Columns(text_a, text_b, None, index=0)


_BINARY, _NLI = ("0", "1"), ("entailment", "not_entailment")
_PAIR_WITH_INDEX = dict(labeled=_labeled(1, 2, 3, index=0), test=_unlabeled(1, 2))
GLUE_PROCESSORS = {
    "cola": GlueProcessor(
        "CoLA", _BINARY, labeled=_labeled(3, label=1, header=False), test=_unlabeled(1)
    ),
    "sst2": GlueProcessor("SST-2", _BINARY, labeled=_labeled(0, label=1), test=_unlabeled(1)),
    "mrpc": GlueProcessor("MRPC", _BINARY, labeled=_labeled(3, 4, label=0), test=_unlabeled(3, 4)),
    "stsb": GlueProcessor(
        "STS-B", None, labeled=_labeled(7, 8, label=9, index=0), test=_unlabeled(7, 8)
    ),
    "qqp": GlueProcessor(
        "QQP", _BINARY, labeled=_labeled(3, 4, label=5, index=0), test=_unlabeled(1, 2)
    ),
    "mnli": GlueProcessor(
        "MNLI",
        ("contradiction", "entailment", "neutral"),
        labeled=_labeled(8, 9, label=-1, index=0),
        test=_unlabeled(8, 9),
        eval_splits=("dev_matched", "dev_mismatched"),
        predict_splits=("test_matched", "test_mismatched"),
        submission_names=("MNLI-m.tsv", "MNLI-mm.tsv"),
    ),
    "qnli": GlueProcessor("QNLI", _NLI, **_PAIR_WITH_INDEX),
    "rte": GlueProcessor("RTE", _NLI, **_PAIR_WITH_INDEX),
    "wnli": GlueProcessor("WNLI", _BINARY, **_PAIR_WITH_INDEX),
}

# XNLI-MT's training file: premise, hypothesis, label. XNLI's dev and test files: language, gold
# label, four parse columns, the two sentences, ids, genre and the annotators' labels.
_XNLI_LANGUAGE = 0
_XNLI_COLUMNS = {
    "train": Columns(0, 1, label=2),
    "dev": Columns(6, 7, label=1),
    "test": Columns(6, 7),
}
_XNLI_TRAIN_LABELS = {"contradictory": "contradiction"}


def normalize_task_name(task_name: str) -> str:
    """`SST-2`, `sst_2`, `sst2` -> `sst2`."""
    return task_name.lower().replace("-", "").replace("_", "")


def get_processor(
    task_name: str,
    text_a_column: str = "text",
    text_b_column: str | None = None,
    label_column: str = "label",
    xnli_language: str = "zh",
) -> DataProcessor:
    """The processor of a GLUE task (any case, `SST-2` or `sst2`), of `xnli`, or of `csv`/`tsv`."""
    key = normalize_task_name(task_name)
    if key in ("csv", "tsv"):
        return DelimitedFileProcessor(key, text_a_column, text_b_column or None, label_column)
    if key == "xnli":
        return XnliProcessor(xnli_language)
    if key not in GLUE_PROCESSORS:
        raise DataError(
            f"`task_name`={task_name}: unknown task; choose one of "
            f"{', '.join(sorted(GLUE_PROCESSORS))}, xnli, csv, tsv"
        )
    return GLUE_PROCESSORS[key]


def encode_examples(
    tokenizer, examples: list[InputExample], label_list: tuple[str, ...] | None, max_seq_length: int
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Examples -> (int32 encoder inputs `[n, max_seq_length]`, labels `[n]` or None).

    Labels are int32 ids into `label_list`, or float32 scores when `label_list` is
    None (regression); None when the examples have no labels (a test split).
    Pairs are cut round robin to fit (`tokenizer.pack_inputs`).
    """
    segments = [tokenizer.tokenize([e.text_a for e in examples])]
    if examples and examples[0].text_b is not None:
        segments.append(tokenizer.tokenize([e.text_b for e in examples]))
    features = {
        name: value.numpy()
        for name, value in tokenizer.pack_inputs(segments, max_seq_length).items()
    }
    if not examples or examples[0].label is None:
        return features, None
    if label_list is None:
        return features, np.array([e.label for e in examples], np.float32)
    ids = {label: i for i, label in enumerate(label_list)}
    return features, np.array([ids[e.label] for e in examples], np.int32)


def _split_path(data_dir: str, file_name: str) -> str:
    return f"{data_dir.rstrip('/')}/{file_name}"


def _read_tsv(path: str, columns: Columns, task: str) -> list[tuple[int, list[str]]]:
    """(line, fields) of each data row of a task's own TSV file (read unquoted, its header skipped);
    `DataError` names `file:line` of a row too short for `columns`."""
    rows = text_files.read_rows(path, DataError, delimiter="\t", quoting=csv.QUOTE_NONE)
    if columns.header:
        rows = rows[1:]
    for line, row in rows:
        if len(row) < columns.min_columns:
            raise DataError(
                f"{path}:{line}: malformed TSV row: {len(row)} tab-separated columns, "
                f"{task} needs at least {columns.min_columns}"
            )
    return rows


def _renamed_label(row: list[str], column: int, names: dict[str, str]) -> list[str]:
    """`row` with the label in its `column` renamed by `names` where they name it."""
    return [names.get(field, field) if i == column else field for i, field in enumerate(row)]


def _check_label(
    label: str, label_set: tuple[str, ...] | None, path: str, line: int
) -> str | float:
    if label_set is None:
        try:
            score = float(label)
        except ValueError:
            raise DataError(f"{path}:{line}: score {label!r} is not a number") from None
        if not math.isfinite(score):
            raise DataError(f"{path}:{line}: score {label!r} is not a finite number")
        return score
    if label not in label_set:
        raise DataError(
            f"{path}:{line}: label {label!r} is not in the label set {', '.join(label_set)}"
        )
    return label
