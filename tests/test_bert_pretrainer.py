"""BertPretrainer: heads, loss and metrics on hand-computed numbers, weight tying, serialization."""

import math

import keras
import numpy as np
import tensorflow as tf
from sklearn.metrics import roc_auc_score

from bert_test_utils import TINY, random_pretraining_batch, tiny_encoder
from bert_tf import BertPretrainer, pretraining_losses
from bert_tf.layers import gather_positions

# Two examples, three prediction slots, a vocab of two tokens. Slot 3 of example 1 is
# padding (weight 0) with a loss that would dominate if it were counted.
FEATURES = {
    "masked_lm_ids": np.array([[1, 1, 1], [0, 0, 0]], "int32"),
    "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]], "float32"),
    "next_sentence_labels": np.array([1, 1], "int32"),
}
OUTPUTS = {
    "masked_lm_logits": np.array(
        [
            [
                [0.0, math.log(2)],  # p(1) = 2/3: right, ce = ln(3/2)
                [math.log(3), 0.0],  # p(1) = 1/4: wrong, ce = ln 4
                [10.0, -10.0],  # weight 0
            ],
            [
                [0.0, 0.0],  # p(0) = 1/2: right (ties go to the first), ce = ln 2
                [5.0, 0.0],
                [5.0, 0.0],
            ],
        ],
        "float32",
    ),
    "next_sentence_logits": np.array(
        [
            [0.0, math.log(4)],  # p(1) = 4/5: right, ce = ln(5/4)
            [math.log(4), 0.0],  # p(1) = 1/5: wrong, ce = ln 5
        ],
        "float32",
    ),
}
MLM_LOSS = (math.log(3 / 2) + math.log(4) + math.log(2)) / 3
NSP_LOSS = (math.log(5 / 4) + math.log(5)) / 2


def test_losses_by_hand():
    losses = pretraining_losses(FEATURES, OUTPUTS)
    np.testing.assert_allclose(losses["masked_lm_loss"], MLM_LOSS, rtol=1e-6)
    np.testing.assert_allclose(losses["next_sentence_loss"], NSP_LOSS, rtol=1e-6)
    np.testing.assert_allclose(losses["loss"], MLM_LOSS + NSP_LOSS, rtol=1e-6)


def test_losses_with_global_denominators_sum_over_replicas():
    # Each replica divides by the global batch's denominators; the sum is the global loss.
    halves = [{k: v[i : i + 1] for k, v in d.items()} for d in (FEATURES, OUTPUTS) for i in (0, 1)]
    (f0, f1), (o0, o1) = halves[:2], halves[2:]
    total = sum(
        pretraining_losses(f, o, masked_lm_weight_sum=3.0, num_examples=2.0)["loss"]
        for f, o in ((f0, o0), (f1, o1))
    )
    np.testing.assert_allclose(total, MLM_LOSS + NSP_LOSS, rtol=1e-6)


def test_all_padding_predictions_give_zero_masked_lm_loss():
    features = dict(FEATURES, masked_lm_weights=np.zeros((2, 3), "float32"))
    assert float(pretraining_losses(features, OUTPUTS)["masked_lm_loss"]) == 0.0


def test_metrics_by_hand():
    model = BertPretrainer(tiny_encoder())
    model.update_pretraining_metrics(FEATURES, OUTPUTS)
    results = {m.name: float(m.result()) for m in model.pretraining_metrics}
    np.testing.assert_allclose(results["masked_lm_accuracy"], 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(results["masked_lm_loss"], MLM_LOSS, rtol=1e-6)
    np.testing.assert_allclose(results["next_sentence_accuracy"], 1 / 2, rtol=1e-6)
    np.testing.assert_allclose(results["next_sentence_loss"], NSP_LOSS, rtol=1e-6)


def test_next_sentence_auc_ranks_pairs_by_their_random_next_probability():
    # Eight pairs whose probabilities of a random next sentence are far apart: Keras's
    # thresholded AUC is then exactly the rank statistic (sklearn's roc_auc_score).
    labels = np.array([0, 0, 1, 0, 1, 1, 0, 1], "int32")
    random_next = np.array([0.05, 0.15, 0.25, 0.35, 0.55, 0.65, 0.85, 0.95])
    logits = np.stack([np.zeros(8), np.log(random_next / (1 - random_next))], axis=1).astype(
        "float32"
    )
    features = {
        "masked_lm_ids": np.zeros((8, 1), "int32"),
        "masked_lm_weights": np.ones((8, 1), "float32"),
        "next_sentence_labels": labels,
    }
    outputs = {"masked_lm_logits": np.zeros((8, 1, 2), "float32"), "next_sentence_logits": logits}
    model = BertPretrainer(tiny_encoder())
    model.update_pretraining_metrics(features, outputs)
    # 12 of the 16 (random, follows) pairs rank the random one higher.
    assert roc_auc_score(labels, random_next) == 12 / 16
    np.testing.assert_allclose(float(model.next_sentence_auc.result()), 12 / 16, atol=1e-6)
    # A constant prediction, such as always the majority label, ranks no better than chance.
    model.next_sentence_auc.reset_state()
    model.update_pretraining_metrics(
        features, dict(outputs, next_sentence_logits=np.zeros((8, 2), "float32"))
    )
    np.testing.assert_allclose(float(model.next_sentence_auc.result()), 0.5, atol=1e-6)


def test_outputs_and_tied_embeddings():
    model = BertPretrainer(tiny_encoder())
    batch = random_pretraining_batch(4, 16, 5, TINY["vocab_size"])
    outputs = model(batch)
    assert outputs["masked_lm_logits"].shape == (4, 5, TINY["vocab_size"])
    assert outputs["next_sentence_logits"].shape == (4, 2)
    embedding = model.encoder.word_embedding_matrix
    # The MLM logits use the encoder's embedding matrix itself.
    assert not any(w.shape == embedding.shape for w in model.masked_lm_head.weights)
    # An id that only appears as an MLM target still gets a gradient through the tied matrix.
    target_only = TINY["vocab_size"] - 1
    batch["input_ids"][batch["input_ids"] == target_only] = 1
    batch["masked_lm_ids"][:, 0] = target_only
    with tf.GradientTape() as tape:
        loss = pretraining_losses(batch, model(batch))["loss"]
    grad = tf.convert_to_tensor(tape.gradient(loss, embedding.value))
    assert float(tf.reduce_max(tf.abs(grad[target_only]))) > 0


def test_logits_equal_the_head_on_the_full_sequence_output():
    # The pretrainer runs the last block only at [CLS] and the masked positions.
    model = BertPretrainer(tiny_encoder())
    batch = random_pretraining_batch(3, 16, 4, TINY["vocab_size"])
    outputs = model(batch)
    encoder_outputs = model.encoder(
        {
            "input_word_ids": batch["input_ids"],
            "input_mask": batch["input_mask"],
            "input_type_ids": batch["segment_ids"],
        }
    )
    masked = gather_positions(encoder_outputs["sequence_output"], batch["masked_lm_positions"])
    expected_logits = model.masked_lm_head(masked, model.encoder.word_embedding_matrix)
    np.testing.assert_allclose(outputs["masked_lm_logits"], expected_logits, atol=1e-5)
    expected_next_sentence = model.next_sentence_head(encoder_outputs["pooled_output"])
    np.testing.assert_allclose(outputs["next_sentence_logits"], expected_next_sentence, atol=1e-5)


def test_next_sentence_head_starts_glorot_uniform():
    """As Model Garden's, and wider than the encoder's truncated normal (stddev 0.02), with
    which next-sentence prediction stayed at the majority label in the demo."""
    keras.utils.set_random_seed(0)
    model = BertPretrainer(tiny_encoder(hidden_size=128, num_attention_heads=2))
    model.build_with_dummy_inputs()
    kernel = np.asarray(model.next_sentence_head.kernel)  # [hidden, 2]
    limit = math.sqrt(6 / sum(kernel.shape))
    assert np.abs(kernel).max() <= limit
    np.testing.assert_allclose(kernel.std(), limit / math.sqrt(3), rtol=0.15)


def test_fit_uses_features_as_targets():
    model = BertPretrainer(tiny_encoder())
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    batch = random_pretraining_batch(8, 16, 4, TINY["vocab_size"])
    first_loss = float(pretraining_losses(batch, model(batch))["loss"])
    history = model.fit(tf.data.Dataset.from_tensors(batch).repeat(30), verbose=0)
    assert set(history.history) >= {
        "loss",
        "masked_lm_accuracy",
        "masked_lm_loss",
        "next_sentence_accuracy",
        "next_sentence_loss",
    }
    final_loss = float(pretraining_losses(batch, model(batch))["loss"])
    assert final_loss < 0.5 * first_loss


def test_fit_clips_the_gradient_to_norm_1():
    keras.utils.set_random_seed(3)
    # wide: a gradient norm well above 1
    model = BertPretrainer(tiny_encoder(initializer_range=0.5))
    model.build_with_dummy_inputs()
    batch = random_pretraining_batch(8, 16, 4, TINY["vocab_size"])
    with tf.GradientTape() as tape:
        loss = pretraining_losses(batch, model(batch, training=True))["loss"]
    assert float(tf.linalg.global_norm(tape.gradient(loss, model.trainable_variables))) > 5
    before = [v.numpy() for v in model.trainable_variables]
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=1.0))
    model.fit(tf.data.Dataset.from_tensors(batch), verbose=0)
    step = [v.numpy() - b for v, b in zip(model.trainable_variables, before)]
    np.testing.assert_allclose(float(tf.linalg.global_norm(step)), 1.0, rtol=1e-4)


def test_keras_file_round_trip(tmp_path):
    model = BertPretrainer(tiny_encoder(dropout=0.1))
    batch = random_pretraining_batch(2, 16, 3, TINY["vocab_size"])
    expected = model(batch)
    path = tmp_path / "pretrainer.keras"
    model.save(path)
    restored = keras.models.load_model(path)
    assert isinstance(restored, BertPretrainer)
    got = restored(batch)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])
    assert restored.get_config()["encoder"] == model.get_config()["encoder"]
