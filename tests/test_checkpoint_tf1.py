"""google-research/bert TF1 checkpoints: read as Model Garden's converter does; lossless writes."""

import os

import keras
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
from bert_tf.checkpoints import CheckpointError, load_checkpoint, write_tf1_checkpoint
from bert_tf.pretraining.checkpoints import pretraining_checkpoint, restore_or_initialize
from checkpoint_test_utils import (
    GOOGLE_CONFIG,
    google_variable_shapes,
    random_tensors,
    write_google_tf1_checkpoint,
)


@pytest.fixture(scope="module")
def google_checkpoint(tmp_path_factory):
    tensors = random_tensors(google_variable_shapes())
    prefix = write_google_tf1_checkpoint(
        tmp_path_factory.mktemp("google") / "uncased_L-2_H-64", tensors, GOOGLE_CONFIG
    )
    return prefix, tensors


def model_garden_from_tf1(prefix, work_dir):
    """Model Garden's own path: tf1_bert_checkpoint_converter_lib, then a tfm BertEncoder."""
    from official.nlp.tools import tf1_bert_checkpoint_converter_lib as converter

    renamed = os.path.join(work_dir, "renamed", "ckpt")
    converter.convert(
        checkpoint_from_path=prefix,
        checkpoint_to_path=renamed,
        num_heads=TINY["num_attention_heads"],
        name_replacements=converter.BERT_V2_NAME_REPLACEMENTS,
        permutations=converter.BERT_V2_PERMUTATIONS,
        exclude_patterns=["adam", "Adam"],
    )
    encoder = model_garden_encoder("gelu")
    converter.create_v2_checkpoint(
        encoder, renamed, os.path.join(work_dir, "v2", "ckpt"), checkpoint_model_name="encoder"
    )
    return encoder


def test_google_tf1_loads_like_model_garden(google_checkpoint, tmp_path):
    prefix, tensors = google_checkpoint
    ours = BertPretrainer(tiny_encoder())
    report = load_checkpoint(prefix, ours)
    theirs = model_garden_from_tf1(prefix, tmp_path)

    inputs = random_encoder_inputs(3, 24, TINY["vocab_size"], lengths=[24, 13, 5], seed=2)
    got = ours.encoder(inputs)
    assert_encoder_outputs_close(got, theirs(inputs))
    assert float(tf.math.reduce_std(got["sequence_output"])) > 0.1

    assert report.format == "tf1"
    assert sorted(report.loaded) == sorted(tensors)
    assert report.missing == report.unused == [] and report.heads == {}
    assert sorted(report.skipped) == sorted(
        ["global_step"] + [f"{name}/adam_{slot}" for name in tensors for slot in "mv"]
    )
    # The pretraining heads are filled too; TF1's [2, hidden] next-sentence weights are transposed.
    np.testing.assert_array_equal(
        ours.next_sentence_head.kernel.numpy(), tensors["cls/seq_relationship/output_weights"].T
    )
    np.testing.assert_array_equal(
        ours.masked_lm_head.output_bias.numpy(), tensors["cls/predictions/output_bias"]
    )


def test_pretraining_init_checkpoint_takes_google_tf1(google_checkpoint, tmp_path):
    prefix, tensors = google_checkpoint
    model = BertPretrainer(tiny_encoder())
    manager = tf.train.CheckpointManager(
        pretraining_checkpoint(model, keras.optimizers.AdamW()), tmp_path / "run", max_to_keep=1
    )
    restore_or_initialize(manager, model, os.path.dirname(prefix))
    np.testing.assert_array_equal(
        model.masked_lm_head.transform.kernel.numpy(),
        tensors["cls/predictions/transform/dense/kernel"],
    )
    missing = tmp_path / "nothing"
    with pytest.raises(CheckpointError) as error:
        restore_or_initialize(manager, model, str(missing))
    assert str(error.value) == (
        f"`init_checkpoint`={missing}: no such checkpoint (no {missing}.index)"
    )


def test_ours_to_tf1_to_ours_is_lossless(google_checkpoint, tmp_path):
    original = BertPretrainer(tiny_encoder())
    original.build_with_dummy_inputs()
    prefix = write_tf1_checkpoint(original, tmp_path / "bert_model.ckpt")

    # Google's names and shapes exactly, as the TF1 program above wrote them (less its optimizer).
    google = dict(tf.train.list_variables(google_checkpoint[0]))
    written = dict(tf.train.list_variables(prefix))
    assert written == {
        name: shape
        for name, shape in google.items()
        if "adam" not in name and name != "global_step"
    }

    restored = BertPretrainer(tiny_encoder())
    report = load_checkpoint(prefix, restored)
    assert len(report.loaded) == len(written) and not report.missing and not report.unused
    assert len(restored.weights) == len(original.weights)
    for a, b in zip(restored.weights, original.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)


@pytest.mark.parametrize(
    "role, names",
    [
        ("classifier", ("output_weights", "output_bias")),
        ("squad", ("cls/squad/output_weights", "cls/squad/output_bias")),
    ],
)
def test_fine_tuned_heads_are_read_and_written_back(role, names, tmp_path):
    shapes = google_variable_shapes()
    shapes.update(
        {
            names[0]: (3 if role == "classifier" else 2, TINY["hidden_size"]),
            names[1]: (3 if role == "classifier" else 2,),
        }
    )
    tensors = random_tensors(shapes, seed=3)
    prefix = write_google_tf1_checkpoint(tmp_path / "fine_tuned", tensors, GOOGLE_CONFIG)

    encoder = tiny_encoder()
    report = load_checkpoint(prefix, encoder)
    assert list(report.heads) == [role]
    # [hidden, labels]
    np.testing.assert_array_equal(report.heads[role]["kernel"], tensors[names[0]].T)
    np.testing.assert_array_equal(report.heads[role]["bias"], tensors[names[1]])
    assert all(name.startswith("cls/") for name in report.unused)

    copy = write_tf1_checkpoint(encoder, tmp_path / "copy" / "bert_model.ckpt", heads=report.heads)
    reader = tf.train.load_checkpoint(copy)
    for name in names:
        np.testing.assert_array_equal(reader.get_tensor(name), tensors[name])
