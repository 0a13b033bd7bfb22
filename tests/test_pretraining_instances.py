"""The pair and masking algorithm keeps google-research/bert's properties."""

import random

import numpy as np
import pytest

from bert_tf.data import masked_lm
from bert_tf.data.pretraining_instances import (
    Documents,
    PairSpans,
    create_pairs,
    pack_pairs,
    truncate_pairs,
)

CLS, SEP, PAD, MASK, VOCAB = 2, 3, 0, 4, 1000


def fake_tokenize(lines):
    """One token per word: id 10 + word length (so 'x' -> 11); words 'z...' give nothing."""
    rows = [[10 + len(w) for w in line.split() if not w.startswith("z")] for line in lines]
    return np.array([t for r in rows for t in r], np.int32), np.cumsum([0] + [len(r) for r in rows])


def random_documents(num_documents, rng):
    lines = []
    for _ in range(num_documents):
        for _ in range(rng.integers(1, 12)):
            lines.append(
                " ".join("x" * int(rng.integers(1, 9)) for _ in range(rng.integers(1, 30)))
            )
        lines.append("")
    return Documents.from_lines(lines, fake_tokenize)


def test_documents_split_on_blank_lines_and_drop_empty_lines():
    documents = Documents.from_lines(["a bb", "zzz", "", "", "ccc", "", "zz", ""], fake_tokenize)
    np.testing.assert_array_equal(documents.token_ids, [11, 12, 13])
    np.testing.assert_array_equal(documents.sentence_splits, [0, 2, 3])
    np.testing.assert_array_equal(documents.document_splits, [0, 1, 2])


def naive_truncate(a, b, max_num_tokens):
    while a + b > max_num_tokens:
        if a > b:
            a -= 1
        else:
            b -= 1
    return a, b


def test_truncation_matches_the_reference_loop():
    rng = np.random.default_rng(0)
    a, b = rng.integers(1, 200, 5000), rng.integers(1, 200, 5000)
    spans = PairSpans(np.zeros(5000, np.int64), a, np.full(5000, 1000), b, np.zeros(5000, np.int8))
    out = truncate_pairs(spans, 125, rng)
    expected = np.array([naive_truncate(x, y, 125) for x, y in zip(a, b)])
    np.testing.assert_array_equal(np.stack([out.a_length, out.b_length], 1), expected)
    front_a = out.a_start  # tokens removed from the front of A; the rest came off the back
    assert np.all((front_a >= 0) & (front_a <= a - out.a_length))
    cut = (a - out.a_length).sum()
    assert abs(front_a.sum() / cut - 0.5) < 0.02  # front or back with equal chance


def test_pairs_follow_the_algorithm():
    documents = random_documents(60, np.random.default_rng(1))
    rng = random.Random(0)
    order = list(range(documents.num_documents))
    max_num_tokens = 61
    spans = PairSpans.concatenate(
        [create_pairs(documents, order, max_num_tokens, 0.1, rng) for _ in range(4)]
    )
    starts = documents.sentence_splits
    sentence_of = np.searchsorted(starts, np.arange(len(documents.token_ids)), side="right") - 1
    document_of = np.searchsorted(documents.document_splits, sentence_of, side="right") - 1
    a_end = spans.a_start + spans.a_length
    assert np.all(spans.a_length >= 1) and np.all(spans.b_length >= 1)
    # A and B are whole sentences; a real next B follows A directly in the same document.
    assert np.isin(spans.a_start, starts).all() and np.isin(spans.b_start, starts).all()
    real = spans.is_random_next == 0
    np.testing.assert_array_equal(spans.b_start[real], a_end[real])
    assert np.all(document_of[spans.b_start[real]] == document_of[spans.a_start[real]])
    assert np.all(document_of[spans.b_start[~real]] != document_of[spans.a_start[~real]])
    # Near 50% random next (more: single-sentence chunks always take a random B).
    assert 0.45 < spans.is_random_next.mean() < 0.65
    truncated = truncate_pairs(spans, max_num_tokens, np.random.default_rng(0))
    total = truncated.a_length + truncated.b_length
    assert (
        total.max() == max_num_tokens
        and np.all(truncated.a_length >= 1)
        and np.all(truncated.b_length >= 1)
    )
    assert np.mean(total < max_num_tokens * 0.5) > 0.05  # short_seq_prob makes some short targets


def test_dupe_passes_differ_and_cover_every_document():
    documents = random_documents(30, np.random.default_rng(2))
    rng = random.Random(1)
    order = list(range(documents.num_documents))
    first, second = (create_pairs(documents, order, 61, 0.1, rng) for _ in range(2))
    starts_of = [set(p.a_start.tolist()) for p in (first, second)]
    assert starts_of[0] != starts_of[1]
    for document in range(documents.num_documents):  # every document starts at least one A
        first_token = documents.sentence_splits[documents.document_splits[document]]
        assert first_token in starts_of[0]


def test_packing_layout():
    tokens = np.arange(100, 200, dtype=np.int32)
    spans = PairSpans(
        np.array([0, 10]),
        np.array([3, 1]),
        np.array([50, 60]),
        np.array([2, 4]),
        np.array([0, 1], np.int8),
    )
    packed = pack_pairs(spans, tokens, 10, CLS, SEP, PAD)
    np.testing.assert_array_equal(
        packed["input_ids"],
        [
            [CLS, 100, 101, 102, SEP, 150, 151, SEP, PAD, PAD],
            [CLS, 110, SEP, 160, 161, 162, 163, SEP, PAD, PAD],
        ],
    )
    np.testing.assert_array_equal(
        packed["segment_ids"], [[0, 0, 0, 0, 0, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1, 1, 1, 0, 0]]
    )
    np.testing.assert_array_equal(packed["input_mask"].sum(1), [8, 8])


def packed_batch(rng, batch=4000, seq=64):
    lengths = rng.integers(8, seq + 1, batch)
    a = np.maximum(1, (lengths - 3) // 2)
    spans = PairSpans(
        np.zeros(batch, np.int64),
        a,
        np.zeros(batch, np.int64),
        lengths - 3 - a,
        np.zeros(batch, np.int8),
    )
    tokens = rng.integers(10, VOCAB, 10_000).astype(np.int32)
    spans.a_start = rng.integers(0, 5000, batch)
    spans.b_start = rng.integers(0, 5000, batch)
    return pack_pairs(spans, tokens, seq, CLS, SEP, PAD)


def masking_config(**overrides):
    return masked_lm.MaskingConfig(
        **{
            **dict(
                masked_lm_prob=0.15,
                max_predictions_per_seq=12,
                vocab_size=VOCAB,
                cls_id=CLS,
                sep_id=SEP,
                mask_id=MASK,
            ),
            **overrides,
        }
    )


def test_masking_statistics_and_never_specials():
    rng = np.random.default_rng(3)
    packed = packed_batch(rng)
    masked, actions, _ = masked_lm.mask_tokens(
        packed["input_ids"], packed["input_mask"], masking_config(), rng
    )
    weights = masked["masked_lm_weights"] > 0
    lengths = packed["input_mask"].sum(1)
    np.testing.assert_array_equal(weights.sum(1), masked_lm.num_to_predict(lengths, 0.15, 12))
    original = np.take_along_axis(packed["input_ids"], masked["masked_lm_positions"], 1)
    np.testing.assert_array_equal(np.where(weights, original, 0), masked["masked_lm_ids"])
    assert not np.isin(masked["masked_lm_ids"][weights], [CLS, SEP, PAD]).any()
    positions = np.where(weights, masked["masked_lm_positions"], 10**6 + np.arange(12))
    assert np.all(np.diff(positions, axis=1) > 0)  # ascending, distinct
    replaced = np.take_along_axis(masked["input_ids"], masked["masked_lm_positions"], 1)[weights]
    shares = [np.mean(replaced == MASK), np.mean(replaced == original[weights])]
    assert abs(shares[0] - 0.8) < 0.02 and abs(shares[1] - 0.1) < 0.015
    np.testing.assert_allclose(actions / actions.sum(), [0.8, 0.1, 0.1], atol=0.015)
    unmasked = ~np.isin(np.arange(64)[None, :], masked["masked_lm_positions"]) | ~weights.any(
        1, keepdims=True
    )
    changed = masked["input_ids"] != packed["input_ids"]
    assert not (changed & unmasked).any()


def test_masking_cap_binds():
    rng = np.random.default_rng(4)
    packed = packed_batch(rng)
    masked, _, _ = masked_lm.mask_tokens(
        packed["input_ids"],
        packed["input_mask"],
        masking_config(masked_lm_prob=0.5, max_predictions_per_seq=5),
        rng,
    )
    assert masked["masked_lm_weights"].sum(1).max() == 5


@pytest.mark.parametrize("seq", [6, 100, 384])
def test_masking_rows_shorter_than_the_predictions_at_any_sequence_length(seq):
    """Rows with fewer maskable tokens than --max_predictions_per_seq, last row included, at
    lengths that are not powers of two (a column decoded from a non-candidate's key once ran
    past the batch there)."""
    rng = np.random.default_rng(6)
    # [CLS] a [SEP] b [SEP]: 2 and 1 maskable tokens in the short rows
    lengths = np.array([seq, 5, seq, 4])
    spans = PairSpans(
        np.zeros(4, np.int64), np.full(4, 1), np.full(4, 10), lengths - 4, np.zeros(4, np.int8)
    )
    packed = pack_pairs(spans, np.arange(100, 100 + seq + 10, dtype=np.int32), seq, CLS, SEP, PAD)
    config = masking_config(max_predictions_per_seq=seq - 3)
    masked, _, _ = masked_lm.mask_tokens(packed["input_ids"], packed["input_mask"], config, rng)
    weights = masked["masked_lm_weights"] > 0
    np.testing.assert_array_equal(weights.sum(1), masked_lm.num_to_predict(lengths, 0.15, seq - 3))
    original = np.take_along_axis(packed["input_ids"], masked["masked_lm_positions"], 1)
    assert not np.isin(original[weights], [CLS, SEP, PAD]).any()


def test_whole_word_masking_takes_whole_words():
    rng = np.random.default_rng(5)
    is_continuation = np.zeros(VOCAB, bool)
    is_continuation[500:] = True  # ids >= 500 are `##` pieces
    packed = packed_batch(rng)
    masked, _, words = masked_lm.mask_tokens(
        packed["input_ids"],
        packed["input_mask"],
        masking_config(),
        rng,
        is_continuation[packed["input_ids"]],
    )
    ids, weights = packed["input_ids"], masked["masked_lm_weights"] > 0
    chosen = np.zeros_like(ids, bool)
    np.put_along_axis(chosen, np.where(weights, masked["masked_lm_positions"], 0), True, 1)
    chosen[:, 0] = False  # padding slots point at 0 ([CLS]), never a prediction
    real = (packed["input_mask"] > 0) & (ids != CLS) & (ids != SEP)
    continues = real & is_continuation[ids] & np.pad(real[:, :-1], ((0, 0), (1, 0)))
    # A continuation piece is chosen exactly when the piece before it is.
    previous_chosen = np.pad(chosen[:, :-1], ((0, 0), (1, 0)))
    np.testing.assert_array_equal(chosen[continues], previous_chosen[continues])
    assert words == (chosen & ~continues).sum()
    # One draw per word: a continuation piece is [MASK] when the piece before it is (but where
    # a random replacement happens to be [MASK]: 1 in VOCAB of them).
    is_mask = masked["input_ids"] == MASK
    previous_is_mask = np.pad(is_mask[:, :-1], ((0, 0), (1, 0)))
    assert (is_mask != previous_is_mask)[chosen & continues].sum() <= 2
    budget = masked_lm.num_to_predict(packed["input_mask"].sum(1), 0.15, 12)
    assert np.all(weights.sum(1) <= budget) and np.mean(weights.sum(1) == budget) > 0.5


@pytest.mark.parametrize("length,expected", [(5, 1), (10, 2), (30, 4), (128, 19), (512, 20)])
def test_num_to_predict_rounds_like_python(length, expected):
    assert (
        masked_lm.num_to_predict(length, 0.15, 20)
        == min(20, max(1, round(length * 0.15)))
        == expected
    )
