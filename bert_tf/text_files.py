"""The UTF-8 data and JSON files bert_tf reads, with one-line errors that name `file:line`."""

from __future__ import annotations

import csv
import io
import json
import os

import tensorflow as tf

from bert_tf import io_utils


def read_utf8(path: str | os.PathLike, error: type[Exception], what: str = "file") -> str:
    """The text of the file `path` (local or remote), without a leading byte-order mark.

    Raises:
      error: `path` is missing or a directory (`<path>: no such <what>`), or holds
        bytes that are not UTF-8 (the message names the first such line, `<path>:<line>`).
    """
    path = io_utils.require_file(path, error, what)
    with tf.io.gfile.GFile(path, "rb") as f:
        return decode_utf8(f.read(), path, error)


def decode_utf8(data: bytes, source: str, error: type[Exception]) -> str:
    """`data` as text, without a leading byte-order mark; `error` names `<source>:<line>` of bytes
    that are not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise error(f"{source}:{line}: not UTF-8 ({e.reason})") from None


def read_json(path: str | os.PathLike, error: type[Exception], what: str = "file"):
    """The JSON value in the file `path`; `error` as `read_utf8` raises it, or naming
    `<path>:<line>:<column>` where the JSON breaks."""
    return parse_json(read_utf8(path, error, what), os.fspath(path), error)


def parse_json(text: str, source: str, error: type[Exception]):
    """The JSON value in `text`, read from `source`; `error` names `<source>:<line>:<column>`
    where the JSON breaks."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{source}:{e.lineno}:{e.colno}: invalid JSON ({e.msg})") from None


def read_rows(path: str, error: type[Exception], **dialect) -> list[tuple[int, list[str]]]:
    """(1-based line where the row starts, fields) for each non-blank row of a UTF-8 CSV/TSV file.

    `dialect` goes to `csv.reader`; a missing file, bytes that are not UTF-8 or an unparsable
    row raise `error` naming `file:line`.
    """
    reader = csv.reader(io.StringIO(read_utf8(path, error), newline=""), **dialect)
    rows, line = [], 1
    try:
        for row in reader:
            if row:  # blank lines (a trailing newline) hold no example
                rows.append((line, row))
            line = reader.line_num + 1  # where the next row starts (a quoted field may span lines)
    except csv.Error as e:
        raise error(f"{path}:{line}: malformed row ({e})") from None
    return rows
