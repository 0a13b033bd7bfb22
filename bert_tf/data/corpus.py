"""Pretraining corpus files: globs, UTF-8 checks, and chunks of whole documents.

The corpus format (google-research/bert's): UTF-8 text, one sentence per line,
a blank line between documents; a file's end ends its last document. The corpus
is cut into chunks of about `chunk_bytes` at blank lines, so that workers share
one big file and memory stays bounded by the chunk size. A chunk never splits a
document, and it spans files: small files (one document each, say) are grouped,
so that a chunk's documents can pair with each other.

A line longer than `MAX_LINE_BYTES` is read as several lines, split at a space or a
sentence end (`split_long_lines`), so that no input, not even one without a newline,
makes one enormous sentence. A file with a NUL byte is not text, and is refused.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.errors import UserInputError

MAX_LINE_BYTES = 1 << 16  # longer lines are split (`split_long_lines`)
_BLOCK_BYTES = 16 << 20  # files are scanned in blocks of whole lines (or of one longer line)
_BLANK_LINE = re.compile(rb"^[ \t\r\f\v]*\n", re.M)
_NEWLINE = b"\n"
_SAFE_CUT_AFTER = b" \t\r\f\v.!?"  # a long line is split after one of these bytes where it can
_CUT_WINDOW = 512  # bytes searched for one: WordPiece makes [UNK] of a word of over 100 characters


class CorpusError(UserInputError):
    """Input text or output paths that cannot be used; the message names the file or the flag."""


@dataclasses.dataclass(frozen=True)
class FileSpan:
    """Bytes `[start, end)` of `path`: whole documents."""

    path: str
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class CorpusChunk:
    """Whole documents: consecutive spans of the corpus's files, in corpus order."""

    spans: tuple[FileSpan, ...]
    index: int  # position in the whole corpus: seeds its randomness

    @property
    def num_bytes(self) -> int:
        return sum(span.end - span.start for span in self.spans)


def expand_input_files(input_file: str, flag: str = "input_file") -> list[str]:
    """The flag `--{flag}`'s comma-separated globs ->
    files, in flag order, each glob sorted, no repeats.

    As in a shell, a wildcard does not match a hidden name (`.data.tfrecord.tmp-…`, what a
    killed run leaves, `io_utils.atomic_output`) unless the pattern's own name starts with a dot.

    Raises:
      CorpusError: a glob matches nothing, or the flag names no glob.
    """
    files = {}  # an ordered set
    for pattern in filter(None, (p.strip() for p in input_file.split(","))):
        matches = sorted(tf.io.gfile.glob(pattern))
        if not os.path.basename(pattern).startswith("."):
            matches = [m for m in matches if not os.path.basename(m).startswith(".")]
        if not matches:
            raise CorpusError(f"`{flag}`: no file matches {pattern}")
        files.update(dict.fromkeys(matches))
    if not files:
        raise CorpusError(f"`{flag}`: no input file given")
    return list(files)


def _resolved(path: str) -> str:
    """A local path with its links and `..` resolved; a remote one (gs://...) as it is."""
    return io_utils.canonical_path(path)


def check_output_files(
    output_files: list[str], input_files: list[str], **other_inputs: str | list[str] | None
) -> None:
    """Raises `CorpusError` for an `--output_file` that would destroy an input or cannot be written.

    That is an output listed twice, an existing directory, one of `input_files`,
    or a file another flag names (`vocab_file=path`, or a list of the files it reads,
    `init_checkpoint=[...]`; a `None` is skipped).
    """
    inputs = {_resolved(p): "an `input_file`" for p in input_files}
    for flag, paths in other_inputs.items():
        if isinstance(paths, str):
            inputs[_resolved(paths)] = f"the `{flag}`"
        else:
            inputs.update({_resolved(p): f"a file of the `{flag}`" for p in paths or []})
    seen = set()
    for path in output_files:
        resolved = _resolved(path)
        if resolved in seen:
            raise CorpusError(f"`output_file`: {path} is listed twice")
        if resolved in inputs:
            raise CorpusError(f"`output_file`: {path} is also {inputs[resolved]}")
        if tf.io.gfile.isdir(path):
            raise CorpusError(f"`output_file`: {path} is a directory")
        seen.add(resolved)


def check_output_directory(output_file: str | os.PathLike) -> None:
    """Raises `CorpusError` naming `--output_file` if the directory of `output_file` is missing."""
    directory = os.path.dirname(os.fspath(output_file)) or "."
    if not tf.io.gfile.isdir(directory):
        raise CorpusError(f"`output_file`: no directory {directory}")


def _blocks(path: str):
    """Yields (offset, bytes) blocks of `path` that end at a newline, at the end of the file, or,
    inside a line longer than a block, at a character boundary."""
    offset, carry = 0, b""
    with tf.io.gfile.GFile(path, "rb") as f:
        while True:
            data = f.read(_BLOCK_BYTES)
            block = carry + data
            if not data:
                if block:
                    yield offset, block
                return
            cut = block.rfind(b"\n") + 1 or _complete_characters(block)
            if cut:
                yield offset, block[:cut]
                offset += cut
            carry = block[cut:]


def _complete_characters(data: bytes) -> int:
    """The length of `data` without the incomplete UTF-8 character at its end, if there is one."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # the first byte of the last character
            length = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) - back if length > back else len(data)
    return len(data)


def _long_lines(block: bytes, partial: int) -> tuple[int, int | None, int]:
    """The lines that `block` ends longer than `MAX_LINE_BYTES`: (their
    count, the index of the first, the bytes of the line it leaves
    unfinished). `partial`: the bytes of the line it continues."""
    newlines = np.flatnonzero(np.frombuffer(block, np.uint8) == ord("\n"))
    if not len(newlines):
        return 0, None, partial + len(block)
    lengths = np.diff(newlines, prepend=-1) - 1  # [lines that end in it]
    lengths[0] += partial
    long = np.flatnonzero(lengths > MAX_LINE_BYTES)
    return len(long), (int(long[0]) if len(long) else None), len(block) - int(newlines[-1]) - 1


def split_long_lines(lines: tf.Tensor) -> tf.Tensor:
    """Lines `[n]` -> lines `[m]`: each longer than
    `MAX_LINE_BYTES` split into lines of fewer bytes.

    Each cut follows the last space, tab or sentence end (`.!?`) in the last `_CUT_WINDOW`
    bytes before it (WordPiece makes `[UNK]` of a longer word anyway), else it falls between
    two characters, as between CJK ones, which BERT's tokenizer splits anyway. The pieces
    are stripped, and blank ones dropped, so that no piece ends a document. Shorter lines
    are kept as they are. Works eagerly and in a graph (tf.data).
    """
    row_bytes = MAX_LINE_BYTES - _CUT_WINDOW  # one cut in the last `_CUT_WINDOW` bytes of each row

    def split_line(line):  # a scalar string -> its pieces [pieces]
        size = tf.strings.length(line)
        rows = (size + row_bytes - 1) // row_bytes
        # Window k holds the bytes around the cuts that may end piece k: window[k, j] precedes
        # the cut at (k + 1) * row_bytes - _CUT_WINDOW + 1 + j.
        first = tf.range(1, rows) * row_bytes - _CUT_WINDOW  # [rows - 1]
        window = tf.io.decode_raw(  # [rows - 1, _CUT_WINDOW + 1]
            tf.strings.substr(line, first, tf.fill(tf.shape(first), _CUT_WINDOW + 1)), tf.uint8
        )
        before, at = window[:, :-1], window[:, 1:]
        safe = tf.reduce_any(tf.stack([before == byte for byte in _SAFE_CUT_AFTER]), axis=0)
        character_start = tf.bitwise.bitwise_and(at, 0xC0) != 0x80

        def last(mask):  # [rows - 1, window] -> the last true column of each row
            return _CUT_WINDOW - 1 - tf.argmax(tf.reverse(mask, [1]), axis=1, output_type=tf.int32)

        cuts = first + 1 + tf.where(tf.reduce_any(safe, axis=1), last(safe), last(character_start))
        starts, ends = tf.concat([[0], cuts], 0), tf.concat([cuts, [size]], 0)
        # each under MAX_LINE_BYTES
        pieces = tf.strings.strip(tf.strings.substr(line, starts, ends - starts))
        return tf.boolean_mask(pieces, tf.strings.length(pieces) > 0)

    def split_all():
        pieces = tf.map_fn(
            lambda args: tf.cond(args[1], lambda: split_line(args[0]), lambda: args[0][tf.newaxis]),
            (lines, is_long),
            fn_output_signature=tf.RaggedTensorSpec([None], tf.string, ragged_rank=0),
        )
        return pieces.flat_values

    is_long = tf.strings.length(lines) > MAX_LINE_BYTES  # [n]
    return tf.cond(tf.reduce_any(is_long), split_all, lambda: lines)


def _bad_lines(block: bytes) -> tuple[int, int]:
    """(number of lines of `block` that are not UTF-8, 0-based index of the first one)."""
    bad = []
    for i, line in enumerate(block.split(b"\n")):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(i)
    return len(bad), bad[0]


def plan_chunks(paths: list[str], chunk_bytes: int, flag: str = "input_file") -> list[CorpusChunk]:
    """Checks every file and cuts the corpus into chunks
    at the first blank line past each `chunk_bytes`.

    A chunk goes on into the next file until it holds `chunk_bytes`, so a corpus of small
    files gets chunks of many documents, not one each; the corpus's last documents join the
    chunk before if they hold less. A chunk holds a single document only where that
    document is longer than `chunk_bytes` (or it is the corpus's only one).

    A line longer than `MAX_LINE_BYTES` is counted, for one warning; `read_chunk` splits it.

    Raises:
      CorpusError: a path is missing or a directory, a file has a NUL byte (it is
        not text), a file has lines that are not UTF-8 (all of them are counted),
        or the whole corpus (the flag `--{flag}`'s files) has no text.
    """
    chunks, has_text = [], False
    bad_lines, first_bad = 0, None
    long_lines, first_long = 0, None
    spans, spans_bytes = [], 0  # the chunk being built: its spans of earlier files, and their size

    def close_chunk(last_span: FileSpan | None = None) -> None:
        nonlocal spans, spans_bytes
        chunks.append(CorpusChunk(tuple(spans + ([last_span] if last_span else [])), len(chunks)))
        spans, spans_bytes = [], 0

    for path in paths:
        io_utils.require_file(path, CorpusError, "corpus file")
        start, size = 0, 0  # where this file's part of the chunk being built starts; bytes read
        line = 1  # the line number at the start of each block
        partial = 0  # the bytes of the line the next block continues
        for offset, block in _blocks(path):
            nul = block.find(b"\0")
            if nul >= 0:
                raise CorpusError(
                    f"{path} line {line + block.count(_NEWLINE, 0, nul)}: a NUL byte; "
                    "this is not a text file"
                )
            try:
                block.decode("utf-8")
            except UnicodeDecodeError:
                count, first = _bad_lines(block)
                bad_lines += count
                first_bad = first_bad or f"{path} line {line + first}"
            starts_line = partial == 0  # a blank line can start at the block's first byte
            count, first, partial = _long_lines(block, partial)
            long_lines += count
            if count and first_long is None:
                first_long = f"{path} line {line + first}"
            has_text = has_text or bool(block.strip())
            search_from = start + chunk_bytes - spans_bytes - offset
            while search_from < len(block):
                match = _BLANK_LINE.search(block, max(search_from, 0 if starts_line else 1))
                if match is None:
                    break
                cut = match.start()
                close_chunk(FileSpan(path, start, offset + cut))
                start = offset + cut
                search_from = cut + chunk_bytes
            line += block.count(b"\n")
            size = offset + len(block)
        if partial > MAX_LINE_BYTES:  # the file's last line, without a newline
            long_lines += 1
            first_long = first_long or f"{path} line {line}"
        if size > start:
            spans.append(FileSpan(path, start, size))
            spans_bytes += size - start
        if spans_bytes >= chunk_bytes:
            close_chunk()
    # the corpus's last documents, less than `chunk_bytes`: with the chunk before
    if spans and chunks:
        last = chunks.pop()
        chunks.append(CorpusChunk(last.spans + tuple(spans), last.index))
    elif spans:
        close_chunk()
    if bad_lines:
        raise CorpusError(f"{bad_lines} input lines are not valid UTF-8 (first: {first_bad})")
    if not has_text:
        raise CorpusError(f"`{flag}`: the corpus is empty ({len(paths)} files without text)")
    if long_lines:
        logging.warning(
            "%d input lines are longer than %d bytes (first: %s): each is read as several lines, "
            "split at a space or a sentence end",
            long_lines,
            MAX_LINE_BYTES,
            first_long,
        )
    return chunks


def check_corpus(paths: list[str], flag: str = "input_file") -> None:
    """Raises `CorpusError` where `plan_chunks` would: a missing file, a NUL byte, lines not UTF-8,
    no text; warns, as it does, of lines longer than `MAX_LINE_BYTES`."""
    plan_chunks(paths, sys.maxsize, flag)


def read_chunk(chunk: CorpusChunk) -> list[str]:
    """The lines of `chunk`, stripped as google-research/bert strips them (blank = document break),
    with a blank line where one file's span ends and the next begins; a line longer than
    `MAX_LINE_BYTES` is split (`split_long_lines`)."""
    lines = []
    for span in chunk.spans:
        with tf.io.gfile.GFile(span.path, "rb") as f:
            f.seek(span.start)
            data = f.read(span.end - span.start)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorpusError(
                f"{span.path}: not valid UTF-8 at byte {span.start + e.start}"
            ) from None
        if lines:
            lines.append("")
        for line in text.split("\n"):
            if len(line) > MAX_LINE_BYTES // 4 and len(line.encode("utf-8")) > MAX_LINE_BYTES:
                pieces = (
                    piece.decode("utf-8").strip()
                    for piece in split_long_lines(tf.constant([line])).numpy()
                )
                lines.extend(piece for piece in pieces if piece)
            else:
                lines.append(line.strip())
    return lines
