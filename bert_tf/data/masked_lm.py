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
    columns = np.arange(seq)
    lengths = input_mask.sum(axis=1)
    budget = num_to_predict(lengths, config.masked_lm_prob, config.max_predictions_per_seq)
    candidate = (input_mask > 0) & (input_ids != config.cls_id) & (input_ids != config.sep_id)
    word_start = candidate.copy()
    if config.is_continuation is not None:  # a `##` piece right after a candidate continues its word
        previous = np.pad(candidate[:, :-1], ((0, 0), (1, 0)))
        word_start &= ~(config.is_continuation[input_ids] & previous)
    start_of = np.maximum.accumulate(np.where(word_start, columns, 0), axis=1)  # [batch, seq]
    next_start = np.where(word_start | ~candidate, columns, seq)
    next_start = np.minimum.accumulate(next_start[:, ::-1], axis=1)[:, ::-1]
    word_length = np.where(word_start, np.roll(next_start, -1, axis=1) - columns, 0)
    word_length[:, -1] = word_start[:, -1]

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
    chosen_word = np.zeros((batch, seq), bool)
    chosen_word[rows, order] = taken_in_order
    chosen = candidate & chosen_word[rows, start_of]  # every piece of a chosen word

    # 80% [MASK], 10% random token, 10% unchanged: one draw per word.
    draw = rng.random((batch, seq))[rows, start_of]
    keep_draw = rng.random((batch, seq))[rows, start_of]
    action = np.where(draw < 0.8, MASK, np.where(keep_draw < 0.5, KEEP, RANDOM))
    random_ids = rng.integers(0, config.vocab_size, (batch, seq))
    replaced = np.where(action == MASK, config.mask_id, np.where(action == RANDOM, random_ids, input_ids))
    output_ids = np.where(chosen, replaced, input_ids).astype(np.int32)

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
