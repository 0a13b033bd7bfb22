"""CoNLL-2003 token tagging data: read `word ... tag` files and encode them as WordPiece windows.

A file holds one word a line, its columns separated by whitespace: the first
column is the word and the last is its tag (`word POS chunk tag` in CoNLL-2003,
or just `word tag`); a blank line ends a sentence and `-DOCSTART-` lines are
skipped. Text to tag (`untagged_ok`) may have the word alone on each line.
Only the first WordPiece of each word carries its label (the paper's choice);
a sentence longer than one window is split into overlapping windows.

Example:
>>> from bert_tf.tokenization import BertTokenizer
>>> sentences = read_conll("train.txt")
>>> labels = label_list(sentences)
>>> labels
['B-LOC', 'B-PER', 'I-PER', 'O']
>>> windows = encode_sentences(sentences, BertTokenizer("vocab.txt"), labels, max_seq_length=16)
>>> windows.features["input_word_ids"].shape
(2, 16)
>>> [[labels[i] for i in ids] for ids in windows.decode(windows.label_ids)]  # per token -> per word
[['B-PER', 'O', 'O', 'B-LOC', 'O'], ['B-PER', 'I-PER', 'O', 'O', 'O']]
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import numpy as np

from bert_tf import text_files
from bert_tf.data.doc_stride import context_score, window_spans
from bert_tf.errors import UserInputError

DOCSTART = "-DOCSTART-"


class ConllError(UserInputError):
    """A CoNLL file that cannot be used; the message names `file:line`."""


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One sentence: its words, their tags (None in a file of words alone), and the file line of
    its first word."""

    words: tuple[str, ...]
    labels: tuple[str, ...] | None
    line: int


def read_conll(
    path: str | os.PathLike, labels: Sequence[str] | None = None, untagged_ok: bool = False
) -> list[Sentence]:
    """Reads a CoNLL file (local or remote); with `labels`,
    a tag outside them is an error naming its line.

    With `untagged_ok`, a file whose first word line has one column holds words alone (text
    to tag): its sentences' `labels` are None.
    """
    path = os.fspath(path)
    known = None if labels is None else set(labels)
    sentences, words, tags, first_line, columns = [], [], [], 0, None
    for number, line in enumerate(text_files.read_utf8(path, ConllError).split("\n"), start=1):
        fields = line.split()
        if not fields or fields[0] == DOCSTART:  # a document start ends a sentence too
            if words:
                sentences.append(_sentence(words, tags, first_line))
            words, tags = [], []
            continue
        if len(fields) < 2 and not (untagged_ok and columns in (None, 1)):
            raise ConllError(f"{path}:{number}: expected `word ... tag`, got {len(fields)} column")
        columns = columns or len(fields)
        if len(fields) != columns:
            raise ConllError(
                f"{path}:{number}: {len(fields)} columns where the file's first line has {columns}"
            )
        if known is not None and columns > 1 and fields[-1] not in known:
            raise ConllError(
                f"{path}:{number}: label {fields[-1]!r} is not in the training "
                f"labels ({' '.join(sorted(known))})"
            )
        if not words:
            first_line = number
        words.append(fields[0])
        if columns > 1:
            tags.append(fields[-1])
    if words:
        sentences.append(_sentence(words, tags, first_line))
    if not sentences:
        raise ConllError(f"{path}:1: no sentences")
    return sentences


def _sentence(words: list[str], tags: list[str], line: int) -> Sentence:
    return Sentence(tuple(words), tuple(tags) if tags else None, line)


def label_list(sentences: Sequence[Sentence]) -> list[str]:
    """The sorted set of tags in `sentences` (the label id is the index)."""
    return sorted({tag for sentence in sentences for tag in sentence.labels})


@dataclasses.dataclass
class TaggedWindows:
    """Sentences encoded as fixed-length windows, and the way back from positions to words.

    `best` marks, for every word, the one position its prediction is read from:
    its first sub-token in the window where that sub-token has the most context.
    """

    sentences: list[Sentence]
    features: dict[str, np.ndarray]  # int32 input_word_ids, input_mask, input_type_ids [n, seq]
    label_ids: np.ndarray  # int32 [n, seq]: word's label at first sub-tokens (0 untagged), else 0
    label_weights: np.ndarray  # float32 [n, seq]: 1 at first sub-tokens, else 0
    sentence_index: np.ndarray  # int32 [n, seq]: the sentence a first sub-token belongs to, else -1
    word_index: np.ndarray  # int32 [n, seq]: its word in that sentence, else -1
    best: np.ndarray  # bool [n, seq]: the position each word is decoded from

    def decode(self, values: np.ndarray) -> list[list]:
        """Per-position values `[n, seq]` -> one value per word, per sentence."""
        decoded = [[None] * len(s.words) for s in self.sentences]
        for sentence, word, value in zip(
            self.sentence_index[self.best],
            self.word_index[self.best],
            np.asarray(values)[self.best],
        ):
            decoded[sentence][word] = value
        return decoded


def encode_sentences(
    sentences: Sequence[Sentence], tokenizer, labels: Sequence[str], max_seq_length: int
) -> TaggedWindows:
    """WordPiece windows `[CLS] pieces [SEP]` of `max_seq_length`, half a window apart.

    All words are tokenized in one batched call; a word with no WordPiece (only
    characters that normalization removes) becomes `[UNK]`, so no word is lost.
    """
    if max_seq_length < 3:
        raise UserInputError(f"`max_seq_length`={max_seq_length} leaves no room for a word")
    label_to_id = {label: i for i, label in enumerate(labels)}
    pieces = tokenizer.tokenize([w for s in sentences for w in s.words])  # [words, (pieces)]
    lengths = pieces.row_lengths().numpy()
    flat_ids = pieces.flat_values.numpy()
    starts = np.concatenate([[0], np.cumsum(lengths)])
    capacity = max_seq_length - 2
    rows, word_offset = [], 0
    for s, sentence in enumerate(sentences):
        # the sentence's pieces; per piece, its word if it is the first piece, else -1
        ids, first = [], []
        for w in range(len(sentence.words)):
            word_pieces = flat_ids[starts[word_offset + w] : starts[word_offset + w + 1]]
            word_pieces = word_pieces if len(word_pieces) else [tokenizer.vocab.unk_id]
            ids.extend(word_pieces)
            first.extend([w] + [-1] * (len(word_pieces) - 1))
        word_offset += len(sentence.words)
        window_starts, window_lengths = window_spans(
            len(ids), capacity, stride=max(1, capacity // 2)
        )
        rows.extend(
            (s, np.asarray(ids), np.asarray(first), start, start + length)
            for start, length in zip(window_starts, window_lengths)
        )
    return _pack(sentences, rows, label_to_id, max_seq_length, tokenizer.vocab)


def _pack(sentences, rows, label_to_id, max_seq_length, vocab) -> TaggedWindows:
    n = len(rows)
    word_ids = np.full((n, max_seq_length), vocab.pad_id, np.int32)
    mask = np.zeros((n, max_seq_length), np.int32)
    label_ids = np.zeros((n, max_seq_length), np.int32)
    sentence_index = np.full((n, max_seq_length), -1, np.int32)
    word_index = np.full((n, max_seq_length), -1, np.int32)
    # how much context a first piece has in its window
    context = np.full((n, max_seq_length), -np.inf)
    for row, (s, ids, first, start, stop) in enumerate(rows):
        size = stop - start
        word_ids[row, : size + 2] = [vocab.cls_id, *ids[start:stop], vocab.sep_id]
        mask[row, : size + 2] = 1
        words = first[start:stop]
        positions = 1 + np.flatnonzero(words >= 0)
        word_index[row, positions] = words[words >= 0]
        sentence_index[row, positions] = s
        tags = sentences[s].labels
        if tags is not None:
            label_ids[row, positions] = [label_to_id[tags[w]] for w in words[words >= 0]]
        offsets = positions - 1
        context[row, positions] = context_score(offsets, size)
    return TaggedWindows(
        sentences=list(sentences),
        features={
            "input_word_ids": word_ids,
            "input_mask": mask,
            "input_type_ids": np.zeros_like(mask),
        },
        label_ids=label_ids,
        label_weights=(sentence_index >= 0).astype(np.float32),
        sentence_index=sentence_index,
        word_index=word_index,
        best=_best_positions(sentence_index, word_index, context),
    )


def _best_positions(sentence_index, word_index, context) -> np.ndarray:
    """bool [n, seq]: each (sentence, word)'s position of most context (the first on ties)."""
    rows, cols = np.nonzero(sentence_index >= 0)
    keys = sentence_index[rows, cols].astype(np.int64) << 32 | word_index[rows, cols]
    order = np.lexsort((-context[rows, cols], keys))  # by word, then most context first (stable)
    keep = np.ones(len(order), bool)
    keep[1:] = keys[order][1:] != keys[order][:-1]
    best = np.zeros(sentence_index.shape, bool)
    best[rows[order][keep], cols[order][keep]] = True
    return best
