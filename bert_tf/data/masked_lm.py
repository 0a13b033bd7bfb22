"""Masked-LM predictions for a batch of packed pairs, in numpy (google-research/bert's rule).

Per sequence of n real tokens: `min(max_predictions_per_seq, max(1, round(n * masked_lm_prob)))`
tokens are to be predicted, never `[CLS]` or `[SEP]`. Words (a token and its
following `##` pieces with whole-word masking, else single tokens) are taken in
random order while they fit in that budget. Each chosen word becomes `[MASK]`
80% of the time, a random vocab token 10% (per piece), and stays as it is 10%.
With whole-word masking, the caller says which tokens continue a word
(`word_segmentation.WordGrouper`): `##` pieces, and the characters of a Chinese word.
"""

from __future__ import annotations

import dataclasses

import numpy as np

MASK, RANDOM, KEEP = 0, 1, 2  # replacement actions, per word


@dataclasses.dataclass(frozen=True)
class MaskingConfig:
    """What the masking needs from the flags and the vocab."""

    masked_lm_prob: float
    max_predictions_per_seq: int
    vocab_size: int
    cls_id: int
    sep_id: int
    mask_id: int


def num_to_predict(lengths, masked_lm_prob: float, max_predictions_per_seq: int) -> np.ndarray:
    """Predictions per sequence of `lengths` tokens (with [CLS], [SEP]), rounded half to even."""
    wanted = np.maximum(1, np.rint(np.asarray(lengths) * masked_lm_prob).astype(np.int64))
    return np.minimum(max_predictions_per_seq, wanted)


def _words(candidate: np.ndarray, continues: np.ndarray):
    """Whole words: (word starts `[batch, seq]`, each token's word start, word length at starts)."""
    seq = candidate.shape[1]
    columns = np.arange(seq)
    previous = np.pad(candidate[:, :-1], ((0, 0), (1, 0)))
    word_start = candidate & ~(continues & previous)  # a continuation after a candidate continues
    start_of = np.maximum.accumulate(np.where(word_start, columns, 0), axis=1)
    boundary = np.where(word_start | ~candidate, columns, seq)
    # first boundary >= column
    next_boundary = np.minimum.accumulate(boundary[:, ::-1], axis=1)[:, ::-1]
    following = np.pad(next_boundary[:, 1:], ((0, 0), (0, 1)), constant_values=seq)
    return word_start, start_of, np.where(word_start, following - columns, 0)


def _random_keys(shape: tuple[int, int], rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Distinct random keys: (uint32 `[batch, seq]`, random high bits and the column in the low
    bits; the number of low bits). Two keys tie in their random bits with a chance of 2**-25 at seq
    128: then the earlier column sorts first."""
    batch, seq = shape
    position_bits = max(1, (seq - 1).bit_length())
    # 2 keys per draw
    random_bits = rng.bit_generator.random_raw((batch * seq + 1) // 2).view(np.uint32)
    keys = random_bits[: batch * seq].reshape(shape)
    keys &= np.uint32(0xFFFFFFFF << position_bits & 0xFFFFFFFF)
    keys |= np.arange(seq, dtype=np.uint32)
    return keys, position_bits


def _choose_tokens(
    candidate: np.ndarray, budget: np.ndarray, num_predictions: int, rng: np.random.Generator
) -> np.ndarray:
    """The `budget` candidates of each row with the smallest random keys: their positions,
    ascending, then `seq` as padding, `[batch, num_predictions]` (`budget <= num_predictions`).

    This is the greedy pass over words in random order when every word is one token.
    """
    batch, seq = candidate.shape
    keys, position_bits = _random_keys(candidate.shape, rng)
    # Non-candidates sort last but keep their column in the low bits, which index `candidate` below.
    np.bitwise_or(
        keys, np.uint32(0xFFFFFFFF << position_bits & 0xFFFFFFFF), out=keys, where=~candidate
    )
    smallest = np.sort(keys, axis=1)[:, :num_predictions]
    positions = (smallest & np.uint32((1 << position_bits) - 1)).astype(np.intp)
    taken = (np.arange(num_predictions) < budget[:, None]) & candidate.reshape(-1)[
        np.arange(batch)[:, None] * seq + positions
    ]
    return np.sort(np.where(taken, positions, seq), axis=1)


def _choose_words(
    word_start: np.ndarray, word_length: np.ndarray, budget: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Word starts `[batch, seq]` taken greedily in random order while their words fit `budget`."""
    batch, seq = word_start.shape
    rows = np.arange(batch)[:, None]
    keys, _ = _random_keys(word_start.shape, rng)
    np.copyto(keys, np.iinfo(np.uint32).max, where=~word_start)
    order = np.argsort(keys, axis=1)
    lengths_in_order = word_length[rows, order]  # 0 past the last word
    taken_in_order = np.zeros((batch, seq), bool)
    used = np.zeros(batch, np.int64)
    for k in range(int(word_start.sum(axis=1).max(initial=0))):
        if (used == budget).all():
            break
        fits = (lengths_in_order[:, k] > 0) & (used + lengths_in_order[:, k] <= budget)
        taken_in_order[:, k] = fits
        used += np.where(fits, lengths_in_order[:, k], 0)
    chosen = np.zeros((batch, seq), bool)
    chosen[rows, order] = taken_in_order
    return chosen


def _chosen_positions(
    input_ids: np.ndarray,
    input_mask: np.ndarray,
    continues: np.ndarray | None,
    config: MaskingConfig,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(the positions to predict, ascending, then `seq` as padding
    `[batch, max_predictions_per_seq]`; with whole-word masking,
    the start of each token's word `[batch, seq]`, else None)."""
    seq = input_ids.shape[1]
    budget = num_to_predict(
        input_mask.sum(axis=1), config.masked_lm_prob, config.max_predictions_per_seq
    )
    candidate = (input_mask > 0) & (input_ids != config.cls_id) & (input_ids != config.sep_id)
    if continues is None:
        return _choose_tokens(candidate, budget, config.max_predictions_per_seq, rng), None
    word_start, start_of, word_length = _words(candidate, continues)
    chosen = candidate & np.take_along_axis(
        _choose_words(word_start, word_length, budget, rng), start_of, 1
    )
    positions = np.sort(np.where(chosen, np.arange(seq), seq), axis=1)[
        :, : config.max_predictions_per_seq
    ]
    return positions, start_of


def mask_tokens(
    input_ids: np.ndarray,
    input_mask: np.ndarray,
    config: MaskingConfig,
    rng: np.random.Generator,
    continues: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    """Chooses and replaces the tokens to predict.

    Args:
      input_ids, input_mask: `[batch, seq]` packed pairs.
      continues: for whole-word masking, bool `[batch, seq]`: whether each token continues
        the word of the token before it. None masks single tokens.

    Returns:
      (features, action counts, words): `input_ids` `[batch, seq]` with the replacements,
      `masked_lm_positions` and `masked_lm_ids` int32 `[batch, max_predictions_per_seq]`
      (ascending positions, zero padded), `masked_lm_weights` float32 (1 per real
      prediction); the number of predicted tokens per action `[3]` (MASK, RANDOM, KEEP);
      the number of predicted words (tokens, without whole-word masking).
    """
    batch, seq = input_ids.shape
    rows = np.arange(batch)[:, None]
    positions, start_of = _chosen_positions(input_ids, input_mask, continues, config, rng)
    real = positions < seq
    positions = np.where(real, positions, 0).astype(np.int32)
    flat = rows * seq + positions  # indices into the flattened `[batch * seq]` arrays
    original = input_ids.reshape(-1)[flat]
    # One draw per word (a piece takes its word's):
    # < 0.8 [MASK], < 0.9 unchanged, else a random token.
    draw = rng.random(positions.shape)
    words = int(real.sum())
    if start_of is not None:  # A piece's word starts that many slots before it.
        slots_after_start = positions - start_of.reshape(-1)[flat]
        draw = draw[rows, np.arange(positions.shape[1]) - slots_after_start]
        words = int((real & (slots_after_start == 0)).sum())
    action = np.where(draw < 0.8, MASK, np.where(draw < 0.9, KEEP, RANDOM))
    random_ids = rng.integers(0, config.vocab_size, positions.shape)
    replacement = np.where(
        action == MASK, config.mask_id, np.where(action == RANDOM, random_ids, original)
    )
    output_ids = input_ids.astype(np.int32, copy=True)
    output_ids.reshape(-1)[flat] = np.where(real, replacement, original)
    features = {
        "input_ids": output_ids,
        "masked_lm_positions": positions,
        "masked_lm_ids": np.where(real, original, 0).astype(np.int32),
        "masked_lm_weights": real.astype(np.float32),
    }
    return features, np.bincount(action[real], minlength=3), words
