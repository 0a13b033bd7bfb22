"""A sampled masked-LM softmax: each prediction against the batch's labels plus random vocab ids.

Every prediction of the batch is scored against one shared candidate set: the batch's label
ids, each once, and `num_samples` ids drawn uniformly from the vocab (with replacement), those
already among the labels left out. The frequent tokens, which carry much of the softmax's mass,
are nearly always among the labels; each draw stands for `vocab_size / num_samples` of the
other tokens, so the weighted sum of `exp(logit)` over the candidates estimates the full
softmax's denominator without bias.

Example:
>>> from bert_tf.layers.masked_lm_head import MaskedLMHead
>>> head = MaskedLMHead(vocab_size=100, hidden_size=16)
>>> scores = sampled_masked_lm_scores(
...     head, keras.ops.ones((2, 3, 16)), keras.ops.ones((100, 16)),
...     keras.ops.ones((2, 3), "int32"), 10, keras.random.SeedGenerator(1))
>>> sorted((name, tuple(value.shape)) for name, value in scores.items())[0]
('masked_lm_best_logits', (2, 3))
"""

from __future__ import annotations

import math

import keras
from keras import ops


def sampled_masked_lm_scores(
    head, masked_states, word_embeddings, masked_lm_ids, num_samples: int, seed
):
    """The masked-LM scores of a step that does not score the whole vocab (module docstring).

    Args:
        head: the pretrainer's `MaskedLMHead`.
        masked_states: `[batch, predictions, hidden]`, the encoder's output at the masked positions.
        word_embeddings: the encoder's embedding matrix `[vocab_size, hidden]`.
        masked_lm_ids: int `[batch, predictions]`, the labels.
        num_samples: how many vocab ids to draw.
        seed: a `keras.random.SeedGenerator`.

    Returns:
        A dict of float32 `[batch, predictions]` tensors, read in place of `masked_lm_logits`:
        `masked_lm_label_logits`, the label's logit; `masked_lm_log_partition`, the log of the
        estimated softmax denominator; `masked_lm_best_logits`, the largest candidate logit.
    """
    batch, predictions = ops.shape(masked_lm_ids)[0], ops.shape(masked_lm_ids)[1]
    labels = ops.reshape(ops.cast(masked_lm_ids, "int32"), (-1,))  # [n]
    n = ops.shape(labels)[0]
    # The column where each label first appears; a later column with the same id is a repeat.
    first = ops.argmax(ops.cast(labels[:, None] == labels[None, :], "int32"), axis=1)  # [n]
    repeated = first != ops.arange(n, dtype=first.dtype)  # [n]
    # [samples]
    draws = keras.random.randint((num_samples,), 0, head.vocab_size, dtype="int32", seed=seed)
    drawn_label = ops.any(draws[:, None] == labels[None, :], axis=1)  # [samples]

    candidates = ops.concatenate([labels, draws])  # [n + samples]
    left_out = ops.concatenate([repeated, drawn_label])  # [n + samples]
    log_weights = ops.concatenate(
        [ops.zeros((n,)), ops.full((num_samples,), math.log(head.vocab_size / num_samples))]
    )
    # [batch, predictions, n + samples]
    logits = head(masked_states, word_embeddings, candidate_ids=candidates)
    logits = ops.where(left_out, float("-inf"), ops.reshape(logits, (n, -1)))  # [n, n + samples]

    def per_prediction(values):  # [n] -> [batch, predictions]
        return ops.reshape(values, (batch, predictions))

    return {
        "masked_lm_label_logits": per_prediction(
            ops.take_along_axis(logits, first[:, None], axis=1)[:, 0]
        ),
        "masked_lm_log_partition": per_prediction(ops.logsumexp(logits + log_weights, axis=1)),
        "masked_lm_best_logits": per_prediction(ops.max(logits, axis=1)),
    }
