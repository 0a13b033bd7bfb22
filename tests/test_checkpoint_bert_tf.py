"""bert_tf's checkpoints: training (`model=`, `optimizer=`, `step=`), `encoder=`, `.keras` files."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import TINY, assert_encoder_outputs_close, random_encoder_inputs, tiny_encoder
from bert_tf import BertPretrainer
from bert_tf.checkpoints import checkpoint_config, load_checkpoint
from bert_tf.pretraining.checkpoints import pretraining_checkpoint
from checkpoint_test_utils import randomize_weights


def random_pretrainer(seed=0):
    model = BertPretrainer(tiny_encoder())
    model.build_with_dummy_inputs()
    randomize_weights(model, seed)
    return model


def assert_same_weights(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)


def test_pretraining_checkpoint_loads_into_pretrainer_and_encoder(tmp_path):
    source = random_pretrainer()
    optimizer = keras.optimizers.AdamW(1e-3)
    optimizer.build(source.trainable_variables)
    # run_pretraining.py's layout: model=, encoder= (the same encoder) and optimizer=.
    tf.train.CheckpointManager(
        pretraining_checkpoint(source, optimizer), tmp_path, max_to_keep=1
    ).save()

    pretrainer = BertPretrainer(tiny_encoder())
    report = load_checkpoint(tmp_path, pretrainer)  # the directory: its latest checkpoint
    assert_same_weights(pretrainer.weights, source.weights)
    assert report.format == "bert_tf" and report.missing == report.unused == []
    assert {"save_counter", "optimizer/_iterations"} <= set(report.skipped)

    encoder = tiny_encoder()
    report = load_checkpoint(tmp_path, encoder)
    assert_same_weights(encoder.weights, source.encoder.weights)
    assert report.unused == sorted(
        f"model/{path}"
        for path in (
            "masked_lm_head/output_bias",
            "masked_lm_head/layer_norm/beta",
            "masked_lm_head/layer_norm/gamma",
            "masked_lm_head/transform/_kernel",
            "masked_lm_head/transform/bias",
            "next_sentence_head/_kernel",
            "next_sentence_head/bias",
        )
    )


@pytest.mark.parametrize("kind", ["encoder_checkpoint", "keras_file"])
def test_encoder_checkpoint_and_keras_file_load(kind, tmp_path):
    source = tiny_encoder()
    randomize_weights(source, seed=1)
    if kind == "keras_file":
        path = tmp_path / "encoder.keras"
        source.save(path)
    else:
        path = tf.train.Checkpoint(encoder=source).write(str(tmp_path / "ckpt"))

    target = BertPretrainer(tiny_encoder())
    report = load_checkpoint(path, target)
    inputs = random_encoder_inputs(2, 16, TINY["vocab_size"], seed=6)
    assert_encoder_outputs_close(target.encoder(inputs), source(inputs), atol=0)
    assert report.format == {"keras_file": "keras", "encoder_checkpoint": "bert_tf"}[kind]
    assert len(report.missing) == 7 and all(name.startswith("cls/") for name in report.missing)


def test_a_keras_files_config_keeps_the_extra_keys_of_bert_config_json(tmp_path):
    """Keys bert_tf does not use (such as `directionality`) travel with the encoder."""
    source = tiny_encoder(extra={"directionality": "bidi", "pooler_type": "first_token_transform"})
    source.save(tmp_path / "encoder.keras")
    config = checkpoint_config(tmp_path / "encoder.keras")
    assert config.extra == {"directionality": "bidi", "pooler_type": "first_token_transform"}
    assert config == source.bert_config
