"""Model Garden TF2 checkpoints (`tf.train.Checkpoint(encoder=...)`) load with equal outputs."""

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    TINY,
    assert_encoder_outputs_close,
    model_garden_encoder,
    random_encoder_inputs,
    tiny_encoder,
)
from bert_tf import BertPretrainer
from bert_tf.checkpoints import CheckpointError, load_checkpoint
from checkpoint_test_utils import randomize_weights


@pytest.mark.parametrize("network", ["BertEncoder", "BertEncoderV2"])
def test_model_garden_checkpoint_loads_with_identical_outputs(network, tmp_path):
    theirs = model_garden_encoder("gelu", network)
    inputs = random_encoder_inputs(3, 24, TINY["vocab_size"], lengths=[24, 13, 5], seed=4)
    theirs(inputs)  # BertEncoderV2 creates its weights on the first call
    randomize_weights(theirs, seed=5)
    expected = theirs(inputs)
    # As official/nlp/tools/tf2_bert_encoder_checkpoint_converter.py saves it.
    tf.train.Checkpoint(encoder=theirs).save(str(tmp_path / "ckpt"))

    ours = BertPretrainer(tiny_encoder())
    report = load_checkpoint(tmp_path, ours)
    assert_encoder_outputs_close(ours.encoder(inputs), expected)
    assert report.format == "model_garden"
    assert len(report.loaded) == len(theirs.weights) == len(ours.encoder.weights)
    assert report.unused == [] and report.skipped == ["save_counter"]
    assert all(name.startswith("cls/") for name in report.missing)


@pytest.mark.parametrize("layout", ["model", "checkpoint_items"])
def test_model_garden_pretrainer_checkpoint_gives_its_encoder_and_masked_lm(layout, tmp_path):
    import tensorflow_models as tfm
    import tf_keras

    theirs = tfm.nlp.models.BertPretrainerV2(
        encoder_network=model_garden_encoder("gelu"), mlm_activation=tf_keras.activations.gelu
    )
    inputs = random_encoder_inputs(2, 16, TINY["vocab_size"], lengths=[16, 7], seed=6)
    positions = np.array([[1, 4, 9], [2, 3, 5]], "int32")
    theirs({**inputs, "masked_lm_positions": positions})  # creates the masked-LM head's weights
    randomize_weights(theirs, seed=7)
    # As Model Garden's trainer saves a pretraining run (the encoder under `model/encoder_network`),
    # or as its export of the pretrainer's parts.
    items = {"model": theirs} if layout == "model" else theirs.checkpoint_items
    tf.train.Checkpoint(**items).save(str(tmp_path / "ckpt"))

    ours = BertPretrainer(tiny_encoder())
    report = load_checkpoint(tmp_path, ours)
    assert report.format == "model_garden"
    assert_encoder_outputs_close(ours.encoder(inputs), theirs.encoder_network(inputs))
    features = {
        "input_ids": inputs["input_word_ids"],
        "input_mask": inputs["input_mask"],
        "segment_ids": inputs["input_type_ids"],
        "masked_lm_positions": positions,
    }
    np.testing.assert_allclose(
        ours(features)["masked_lm_logits"],
        theirs({**inputs, "masked_lm_positions": positions})["mlm_logits"],
        atol=1e-5,
    )
    assert all(name.startswith("cls/seq_relationship/") for name in report.missing), report.missing


def test_a_different_head_count_is_refused(tmp_path):
    # Model Garden's attention kernels record the head count ([hidden, heads, head_size]); merged
    # into TF1's [hidden, hidden], 4 heads would fill a 2-head model without error.
    theirs = model_garden_encoder("gelu")
    prefix = tf.train.Checkpoint(encoder=theirs).write(str(tmp_path / "ckpt"))
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(prefix, tiny_encoder(num_attention_heads=2))
    assert str(error.value) == (
        f"{prefix}: checkpoint does not fit the model: num_attention_heads is "
        f"{TINY['num_attention_heads']} in the checkpoint and 2 in the model"
    )
