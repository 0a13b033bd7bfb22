"""Pretraining loss: weighted-mean masked-LM cross-entropy plus mean next-sentence cross-entropy
(when the model predicts next sentences)."""

from __future__ import annotations

import keras
from keras import ops


def cross_entropy(labels, logits):
    """Float32 cross-entropy `[...]` of int `labels` `[...]` against `logits` `[..., classes]`."""
    return keras.losses.sparse_categorical_crossentropy(
        labels, ops.cast(logits, "float32"), from_logits=True
    )


def pretraining_losses(features, outputs, masked_lm_weight_sum=None, num_examples=None):
    """The two losses and their sum, as in google-research/bert's run_pretraining.py.

    `loss` is sum(weights * ce) / sum(weights) over the masked-LM predictions plus the mean
    next-sentence ce; without `next_sentence_logits` in `outputs`, the masked-LM loss alone.

    Args:
        features: the batch's `masked_lm_ids`, `masked_lm_weights` and `next_sentence_labels`.
        outputs: `BertPretrainer`'s: `masked_lm_logits`, or `sampled_masked_lm_scores`'s dict.
        masked_lm_weight_sum, num_examples: the denominators; None: this batch's. A distributed
            step passes the global batch's, so that the replicas' losses sum to its loss.

    Returns:
        A dict of float32 tensors: the scalars `loss`, `masked_lm_loss`, `next_sentence_loss`,
        and the `masked_lm_cross_entropy` `[batch, predictions]` and `next_sentence_cross_entropy`
        `[batch]` they come from (the metrics reuse them); no next-sentence entries without NSP.
    """
    weights = ops.cast(features["masked_lm_weights"], "float32")
    if "masked_lm_logits" in outputs:
        # [batch, predictions]
        mlm_ce = cross_entropy(features["masked_lm_ids"], outputs["masked_lm_logits"])
    else:
        mlm_ce = outputs["masked_lm_log_partition"] - outputs["masked_lm_label_logits"]
    if masked_lm_weight_sum is None:
        masked_lm_weight_sum = ops.sum(weights)
    masked_lm_loss = ops.divide_no_nan(ops.sum(weights * mlm_ce), masked_lm_weight_sum)
    losses = {
        "loss": masked_lm_loss,
        "masked_lm_loss": masked_lm_loss,
        "masked_lm_cross_entropy": mlm_ce,
    }
    if "next_sentence_logits" in outputs:
        # [batch]
        nsp_ce = cross_entropy(features["next_sentence_labels"], outputs["next_sentence_logits"])
        if num_examples is None:
            num_examples = ops.cast(ops.shape(nsp_ce)[0], "float32")
        losses["next_sentence_loss"] = ops.sum(nsp_ce) / num_examples
        losses["next_sentence_cross_entropy"] = nsp_ce
        losses["loss"] = masked_lm_loss + losses["next_sentence_loss"]
    return losses
