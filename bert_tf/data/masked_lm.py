"""Masked-LM predictions for a batch of packed pairs, vectorised in numpy (google-research/bert's rule).

Per sequence of n real tokens: `min(max_predictions_per_seq, max(1, round(n * masked_lm_prob)))`
tokens are to be predicted, never `[CLS]` or `[SEP]`. Words (a token and its
following `##` pieces with whole-word masking, else single tokens) are taken in
random order while they fit in that budget. Each chosen word becomes `[MASK]`
80% of the time, a random vocab token 10% (per piece), and stays as it is 10%.
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
    is_continuation: np.ndarray | None = None  # `[vocab]` bool: `##` pieces; None = per-token masking


def num_to_predict(lengths, masked_lm_prob: float, max_predictions_per_seq: int) -> np.ndarray:
    """Predictions per sequence of `lengths` real tokens ([CLS] and [SEP] included), rounded half to even."""
    wanted = np.maximum(1, np.rint(np.asarray(lengths) * masked_lm_prob).astype(np.int64))
    return np.minimum(max_predictions_per_seq, wanted)


def _words(candidate: np.ndarray, input_ids: np.ndarray, is_continuation: np.ndarray | None):
    """(word starts `[batch, seq]`, start of each token's word (None: itself), word length at starts)."""
    if is_continuation is None:
        return candidate, None, candidate.astype(np.int64)
    seq = candidate.shape[1]
    columns = np.arange(seq)
    previous = np.pad(candidate[:, :-1], ((0, 0), (1, 0)))
    word_start = candidate & ~(is_continuation[input_ids] & previous)  # `##` after a candidate continues
    start_of = np.maximum.accumulate(np.where(word_start, columns, 0), axis=1)
    boundary = np.where(word_start | ~candidate, columns, seq)
    next_boundary = np.minimum.accumulate(boundary[:, ::-1], axis=1)[:, ::-1]  # first boundary >= column
    following = np.pad(next_boundary[:, 1:], ((0, 0), (0, 1)), constant_values=seq)
    return word_start, start_of, np.where(word_start, following - columns, 0)


def mask_tokens(input_ids: np.ndarray, input_mask: np.ndarray, config: MaskingConfig,
                rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Chooses and replaces the tokens to predict.

    Args:
      input_ids, input_mask: `[batch, seq]` packed pairs.

    Returns:
      (features, action counts): `input_ids` `[batch, seq]` with the replacements,
      `masked_lm_positions` and `masked_lm_ids` int32 `[batch, max_predictions_per_seq]`
      (ascending positions, zero padded), `masked_lm_weights` float32 (1 per real
      prediction); and the number of predicted tokens per action `[3]` (MASK, RANDOM, KEEP).
    """
    batch, seq = input_ids.shape
    rows = np.arange(batch)[:, None]
    budget = num_to_predict(input_mask.sum(axis=1), config.masked_lm_prob, config.max_predictions_per_seq)
    candidate = (input_mask > 0) & (input_ids != config.cls_id) & (input_ids != config.sep_id)
    word_start, start_of, word_length = _words(candidate, input_ids, config.is_continuation)

    # Words in random order, taken greedily while they fit in the budget.
    order = np.argsort(np.where(word_start, rng.random((batch, seq)), 2.0), axis=1)
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
    # One draw per word: < 0.8 [MASK], < 0.9 unchanged, else a random token (per piece).
    draw = rng.random((batch, seq))
    if start_of is not None:  # every piece of a chosen word, with the word's draw
        chosen, draw = candidate & chosen[rows, start_of], draw[rows, start_of]
    action = np.where(draw < 0.8, MASK, np.where(draw < 0.9, KEEP, RANDOM))
    output_ids = input_ids.astype(np.int32, copy=True)
    output_ids[chosen & (action == MASK)] = config.mask_id
    random_slots = chosen & (action == RANDOM)
    output_ids[random_slots] = rng.integers(0, config.vocab_size, int(random_slots.sum()))

    num_predictions = config.max_predictions_per_seq
    positions = np.argsort(~chosen, axis=1, kind="stable")[:, :num_predictions]  # chosen first, ascending
    real = np.arange(num_predictions) < chosen.sum(axis=1, keepdims=True)
    features = {
        "input_ids": output_ids,
        "masked_lm_positions": np.where(real, positions, 0).astype(np.int32),
        "masked_lm_ids": np.where(real, input_ids[rows, positions], 0).astype(np.int32),
        "masked_lm_weights": real.astype(np.float32),
    }
    return features, np.bincount(action[chosen], minlength=3)
