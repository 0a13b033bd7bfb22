"""Sampled masked-LM softmax: exact where labels cover the vocab, else unbiased; trainable."""

import keras
import numpy as np
import tensorflow as tf

from bert_test_utils import TINY, random_pretraining_batch, tiny_encoder
from bert_tf import BertPretrainer
from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.models.sampled_masked_lm import sampled_masked_lm_scores


def head_and_inputs(vocab_size, scale, seed=0):
    """A built head with a random output bias, masked states `[2, 6, 16]` and an embedding table."""
    rng = np.random.default_rng(seed)
    head = MaskedLMHead(vocab_size=vocab_size, hidden_size=16)
    states = rng.normal(size=(2, 6, 16)).astype("float32")
    embeddings = (scale * rng.normal(size=(vocab_size, 16))).astype("float32")
    head(states, embeddings)
    head.output_bias.assign(0.3 * rng.normal(size=(vocab_size,)).astype("float32"))
    return head, states, embeddings


def full_scores(head, states, embeddings, labels):
    logits = head(states, embeddings).numpy()  # [batch, predictions, vocab]
    label_logits = np.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return label_logits, tf.reduce_logsumexp(logits, axis=-1).numpy(), logits.max(axis=-1)


def test_labels_that_cover_the_vocab_give_the_full_softmax():
    # Every id of the vocab of 8 is a label, some several times: each repeat and every draw
    # is left out, so the candidates are the vocab once and the scores are exact.
    head, states, embeddings = head_and_inputs(8, scale=1.0)
    labels = np.array([[0, 1, 2, 3, 4, 5], [6, 7, 0, 3, 3, 7]], "int32")
    scores = sampled_masked_lm_scores(
        head, states, embeddings, labels, 50, keras.random.SeedGenerator(1)
    )
    label_logits, log_partition, best = full_scores(head, states, embeddings, labels)
    np.testing.assert_allclose(scores["masked_lm_label_logits"], label_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        scores["masked_lm_log_partition"], log_partition, rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(scores["masked_lm_best_logits"], best, rtol=1e-5, atol=1e-5)


def test_the_softmax_denominator_is_estimated_without_bias():
    # 12 labels among ids 0-9 of a vocab of 200: the denominator's other 190 terms come from
    # 20 draws at a time, each weighted 200/20. Averaged over 400 draws of 20, the estimate
    # meets the full sum (unweighted draws would give about a tenth of the tail).
    head, states, embeddings = head_and_inputs(200, scale=0.2)
    labels = np.random.default_rng(1).integers(0, 10, size=(2, 6)).astype("int32")
    label_logits, log_partition, best = full_scores(head, states, embeddings, labels)
    seed = keras.random.SeedGenerator(2)
    estimates = np.mean(
        [
            np.exp(
                sampled_masked_lm_scores(head, states, embeddings, labels, 20, seed)[
                    "masked_lm_log_partition"
                ]
            )
            for _ in range(400)
        ],
        axis=0,
    )
    np.testing.assert_allclose(estimates, np.exp(log_partition), rtol=0.05)
    scores = sampled_masked_lm_scores(head, states, embeddings, labels, 20, seed)
    np.testing.assert_allclose(scores["masked_lm_label_logits"], label_logits, rtol=1e-5, atol=1e-5)
    assert np.all(scores["masked_lm_best_logits"] <= best + 1e-5)


def test_a_sampled_pretrainer_trains_on_candidates_and_evaluates_on_the_vocab():
    model = BertPretrainer(tiny_encoder(), masked_lm_samples=16)
    batch = random_pretraining_batch(4, 16, 5, TINY["vocab_size"])
    training, evaluation = model(batch, training=True), model(batch, training=False)
    assert sorted(training) == [
        "masked_lm_best_logits",
        "masked_lm_label_logits",
        "masked_lm_log_partition",
        "next_sentence_logits",
    ]
    assert sorted(evaluation) == ["masked_lm_logits", "next_sentence_logits"]
    full_label_logits = np.take_along_axis(
        evaluation["masked_lm_logits"].numpy(), batch["masked_lm_ids"][..., None], axis=-1
    )[..., 0]
    np.testing.assert_allclose(
        training["masked_lm_label_logits"], full_label_logits, rtol=1e-5, atol=1e-6
    )
    assert BertPretrainer.from_config(model.get_config()).masked_lm_samples == 16
