"""Sentence pairs for masked-LM + next-sentence pretraining (google-research/bert's algorithm),
or windows of packed text for the masked LM alone (RoBERTa's FULL-SENTENCES).

Tokens stay in one flat array: a document is a range of sentences and a
sentence a range of tokens, so segment A (contiguous sentences) and segment B
(the continuation, or sentences of a random document) are token ranges.
`create_pairs` runs the per-document loop in Python, one step per pair (a
binary search finds where a segment reaches its target length); truncation and
packing are vectorised over all pairs. `text_windows` and `pack_windows` are the
packed-text counterparts, vectorised throughout.
"""

from __future__ import annotations

import bisect
import dataclasses
import random
from typing import Callable, Sequence

import numpy as np

_TOKENIZE_BATCH = 1 << 16  # lines per tokenizer call, at most
_TOKENIZE_CHARS = 1 << 20  # characters per tokenizer call, about: its memory grows with them


@dataclasses.dataclass(frozen=True)
class Documents:
    """Tokenized documents: `token_ids` `[tokens]`; sentence k is
    `token_ids[sentence_splits[k]:sentence_splits[k + 1]]`; document d is sentences
    `document_splits[d]:document_splits[d + 1]`. No document or sentence is empty. `continues`
    `[tokens]`, for whole-word masking: whether a token continues the word of the one before it."""

    token_ids: np.ndarray
    sentence_splits: np.ndarray
    document_splits: np.ndarray
    continues: np.ndarray | None = None

    @property
    def num_documents(self) -> int:
        return len(self.document_splits) - 1

    @classmethod
    def from_lines(
        cls,
        lines: Sequence[str],
        tokenize: Callable[[list[str]], tuple[np.ndarray, np.ndarray]],
        continues: Callable[[list[str], np.ndarray], np.ndarray] | None = None,
    ) -> "Documents":
        """Lines (stripped) -> documents, split at blank lines.

        `tokenize(lines)` returns (flat ids, row splits). As in google-research/bert,
        a line that yields no token is dropped and does not end a document.
        `continues(lines, flat ids)`, if given, marks the tokens that continue a word.
        """
        texts = [line for line in lines if line]
        blank = np.fromiter((not line for line in lines), bool, len(lines))
        ids, counts, continuing = [], [], []
        ends = np.cumsum([len(text) for text in texts])  # [texts]: characters up to each one's end
        i = 0
        while i < len(texts):
            j = min(
                i + _TOKENIZE_BATCH,
                max(i + 1, int(np.searchsorted(ends, ends[i] + _TOKENIZE_CHARS))),
            )
            batch, i = texts[i:j], j
            flat, splits = tokenize(batch)
            ids.append(flat.astype(np.int32))
            counts.append(np.diff(splits))
            if continues is not None:
                continuing.append(continues(batch, flat))
        counts = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        document_of_text = np.cumsum(blank)[~blank]  # index of the document of each non-blank line
        kept = counts > 0
        document_of_sentence = document_of_text[kept]
        first_sentences = np.flatnonzero(np.diff(document_of_sentence, prepend=-1))
        return cls(
            token_ids=np.concatenate(ids) if ids else np.zeros(0, np.int32),
            sentence_splits=np.concatenate([[0], np.cumsum(counts[kept])]).astype(np.int64),
            document_splits=np.append(first_sentences, len(document_of_sentence)).astype(np.int64),
            continues=None
            if continues is None
            else np.concatenate(continuing)
            if continuing
            else np.zeros(0, bool),
        )


@dataclasses.dataclass
class PairSpans:
    """Pairs as token ranges of `Documents.token_ids`, each field `[pairs]`."""

    a_start: np.ndarray
    a_length: np.ndarray
    b_start: np.ndarray
    b_length: np.ndarray
    is_random_next: np.ndarray

    @classmethod
    def concatenate(cls, spans: Sequence["PairSpans"]) -> "PairSpans":
        return cls(
            *(np.concatenate([getattr(s, f.name) for s in spans]) for f in dataclasses.fields(cls))
        )

    def take(self, indices: np.ndarray) -> "PairSpans":
        return PairSpans(*(getattr(self, f.name)[indices] for f in dataclasses.fields(self)))

    def __len__(self) -> int:
        return len(self.a_start)


def create_pairs(
    documents: Documents,
    document_order: Sequence[int],
    max_num_tokens: int,
    short_seq_prob: float,
    rng: random.Random,
) -> PairSpans:
    """One pass of google-research/bert's `create_instances_from_document` over every document.

    For each document (in `document_order`): a target length of `max_num_tokens`,
    or with `short_seq_prob` a random one in [2, max_num_tokens]; sentences are
    gathered until the target is reached; A is a random number of the first of
    them; B is the rest (label 0) or, half of the time and always when there is a
    single sentence, sentences of another random document (label 1), in which
    case the unused sentences are put back. Pairs are not yet truncated.
    """
    starts = documents.sentence_splits.tolist()
    splits = documents.document_splits.tolist()
    order = list(document_order)
    num_documents = len(order)
    uniform = rng.random
    pairs = []  # (a_start, a_length, b_start, b_length, is_random_next)
    for position, document in enumerate(order):
        first, last = splits[document], splits[document + 1]
        target = max_num_tokens
        if uniform() < short_seq_prob:
            target = 2 + int(uniform() * (max_num_tokens - 1))
        chunk_first = first
        while chunk_first < last:
            # Sentences chunk_first..end - 1: the fewest that reach `target` tokens, or the rest.
            end = bisect.bisect_left(starts, starts[chunk_first] + target, chunk_first + 1, last)
            num_sentences = end - chunk_first
            a_end = chunk_first + 1
            if num_sentences >= 2:
                a_end += int(uniform() * (num_sentences - 1))
            a_start = starts[chunk_first]
            a_length = starts[a_end] - a_start
            if num_sentences == 1 or uniform() < 0.5:
                for _ in range(10):  # another document, if there is one
                    other = int(uniform() * num_documents)
                    if other != position:
                        break
                other_first, other_last = splits[order[other]], splits[order[other] + 1]
                j = other_first + int(uniform() * (other_last - other_first))
                b_start = starts[j]
                # From sentence j, the fewest that fill the rest of the target, or to the end.
                b_end = bisect.bisect_left(starts, b_start + target - a_length, j + 1, other_last)
                pairs.append((a_start, a_length, b_start, starts[b_end] - b_start, 1))
                chunk_first = a_end  # put the unused sentences back
            else:
                pairs.append((a_start, a_length, starts[a_end], starts[end] - starts[a_end], 0))
                chunk_first = end
    columns = np.array(pairs, np.int64).reshape(-1, 5).T
    return PairSpans(*columns[:4], columns[4].astype(np.int8))


def truncate_pairs(spans: PairSpans, max_num_tokens: int, rng: np.random.Generator) -> PairSpans:
    """google-research/bert's `truncate_seq_pair`, in closed form over all pairs.

    Its loop removes one token at a time from the longer segment (B on ties),
    from the front or the back with equal chance, until the pair fits. So the
    longer segment first loses the difference, then the two alternate; the
    number of front removals of each segment is Binomial(removed, 1/2).
    """
    a, b = spans.a_length, spans.b_length
    excess = np.maximum(a + b - max_num_tokens, 0)
    a_longer = a > b
    first = np.minimum(excess, np.where(a_longer, a - b, b - a + 1))  # the longer one alone
    rest = excess - first  # then alternating, starting with the other one
    cut_a = np.where(a_longer, first + rest // 2, (rest + 1) // 2)
    cut_b = excess - cut_a
    return PairSpans(
        a_start=spans.a_start + rng.binomial(cut_a, 0.5),
        a_length=a - cut_a,
        b_start=spans.b_start + rng.binomial(cut_b, 0.5),
        b_length=b - cut_b,
        is_random_next=spans.is_random_next,
    )


def pack_pairs(
    spans: PairSpans,
    token_ids: np.ndarray,
    max_seq_length: int,
    cls_id: int,
    sep_id: int,
    pad_id: int,
    continues: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """`[CLS] A [SEP] B [SEP]`, padded, each `[pairs, max_seq_length]`: `input_ids` int32,
    `segment_ids` and `input_mask` bool; with `continues` (aligned with `token_ids`), also
    `continues` bool, False at `[CLS]`, `[SEP]` and padding."""
    j = np.arange(max_seq_length, dtype=np.int32)
    a_length = spans.a_length.astype(np.int32)[:, None]
    length = a_length + spans.b_length.astype(np.int32)[:, None] + 3
    in_b = j > a_length + 1
    # Where each position's token comes from in `token_ids` (0 for [CLS], [SEP] and padding).
    source = (
        np.where(in_b, (spans.b_start - spans.a_length - 2)[:, None], (spans.a_start - 1)[:, None])
        + j
    )
    is_token = (j > 0) & (j < length - 1) & (j != a_length + 1)
    np.copyto(source, 0, where=~is_token)
    input_ids = token_ids[source].astype(np.int32, copy=False)
    input_ids[~is_token] = pad_id
    input_ids[:, 0] = cls_id
    input_ids[(j == a_length + 1) | (j == length - 1)] = sep_id
    input_mask = j < length
    packed = {"input_ids": input_ids, "segment_ids": in_b & input_mask, "input_mask": input_mask}
    if continues is not None:
        packed["continues"] = continues[source] & is_token
    return packed


SEPARATOR = -1  # in `text_windows`: the [SEP] between two documents
PADDING = -2  # in `text_windows`: past the end of the text


def text_windows(
    documents: Documents, document_orders: Sequence[np.ndarray], window_length: int
) -> np.ndarray:
    """The documents in each order of `document_orders`, one order after the other, as one text
    with a `SEPARATOR` between consecutive documents, cut into windows of `window_length`.

    Returns:
      int64 `[windows, window_length]`: the index in `documents.token_ids` of each token, or
      `SEPARATOR`. Every window is full but the last, which ends in `PADDING`.
    """
    token_starts = documents.sentence_splits[documents.document_splits[:-1]]  # [documents]
    token_ends = documents.sentence_splits[documents.document_splits[1:]]
    order = np.concatenate([np.asarray(o, np.int64) for o in document_orders])
    lengths = (token_ends - token_starts)[order] + 1  # each document and the separator after it
    ends = np.cumsum(lengths)
    # Each position's index in `token_ids`: its offset in the text less its document's shift.
    shift = np.repeat(ends - lengths - token_starts[order], lengths)
    stream = np.arange(ends[-1] if len(ends) else 0) - shift
    stream[ends - 1] = SEPARATOR
    stream = stream[:-1]  # no separator after the last document
    stream = np.pad(stream, (0, -len(stream) % window_length), constant_values=PADDING)
    return stream.reshape(-1, window_length)


def pack_windows(
    windows: np.ndarray,
    token_ids: np.ndarray,
    cls_id: int,
    sep_id: int,
    pad_id: int,
    continues: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """`[CLS] window [SEP]`, padded, each `[windows, window_length + 2]`: `input_ids` int32,
    `segment_ids` (all False) and `input_mask` bool; with `continues` (aligned with
    `token_ids`), also `continues` bool, False at `[CLS]`, `[SEP]` and padding.

    `windows` are `text_windows`'s: a document separator becomes `[SEP]`, as RoBERTa
    separates documents; every sequence starts with `[CLS]` and ends with `[SEP]`, as
    google-research/bert's do, so fine-tuning sees the layout it was pretrained on.
    """
    num_windows, window_length = windows.shape
    is_token = windows >= 0
    source = np.where(is_token, windows, 0)
    body = np.where(is_token, token_ids[source], np.where(windows == SEPARATOR, sep_id, pad_id))
    length = is_token.sum(axis=1) + (windows == SEPARATOR).sum(axis=1) + 2  # [windows]
    input_ids = np.full((num_windows, window_length + 2), pad_id, np.int32)
    input_ids[:, 0] = cls_id
    input_ids[:, 1:-1] = body
    input_ids[np.arange(num_windows), length - 1] = sep_id
    input_mask = np.arange(window_length + 2) < length[:, None]
    packed = {
        "input_ids": input_ids,
        "segment_ids": np.zeros_like(input_mask),
        "input_mask": input_mask,
    }
    if continues is not None:
        packed["continues"] = np.pad(continues[source] & is_token, ((0, 0), (1, 1)))
    return packed
