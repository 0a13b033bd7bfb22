"""Checkpoints that cannot be used fail with one clear line naming the file or variables."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from bert_test_utils import TINY, script_failures, tiny_encoder
from bert_tf import ConfigError
from bert_tf.checkpoints import (
    CheckpointError,
    checkpoint_config,
    load_checkpoint,
    resolve_bert_config,
)
from checkpoint_test_utils import (
    google_variable_shapes,
    random_tensors,
    write_google_tf1_checkpoint,
)


@pytest.fixture(scope="module")
def google_dir(tmp_path_factory):
    """A TF1 checkpoint without bert_config.json, so only the tensors can disagree."""
    directory = tmp_path_factory.mktemp("google")
    write_google_tf1_checkpoint(directory, random_tensors(google_variable_shapes()), vocab=False)
    return directory


def copy_of(directory, tmp_path):
    return shutil.copytree(directory, tmp_path / "copy")


def error_of(path, model) -> str:
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path, model)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_wrong_config(tmp_path):
    directory = tmp_path / "with_config"
    prefix = write_google_tf1_checkpoint(
        directory, random_tensors(google_variable_shapes()), config={**TINY, "hidden_act": "gelu"}
    )
    assert error_of(prefix, tiny_encoder(vocab_size=100, hidden_act="relu")) == (
        f"{prefix}: the model's config does not match the checkpoint's: "
        f"vocab_size 100 in the model, 97 in {directory}/bert_config.json; "
        f"hidden_act 'relu' in the model, 'gelu' in {directory}/bert_config.json"
    )


def test_vocab_size_mismatch_lists_the_variables(google_dir):
    prefix = f"{google_dir}/bert_model.ckpt"
    assert error_of(google_dir, tiny_encoder(vocab_size=100)) == (
        f"{prefix}: checkpoint does not fit the model: vocab_size is 97 in the checkpoint and 100 "
        "in the model; shape mismatch (checkpoint vs model): bert/embeddings/word_embeddings "
        "[97, 64] vs [100, 64]"
    )


def test_layer_count_mismatch_lists_the_variables(google_dir):
    missing = [
        f"bert/encoder/layer_2/attention/self/{p}/{v}"
        for p in ("query", "key", "value")
        for v in ("kernel", "bias")
    ] + [
        "bert/encoder/layer_2/attention/output/dense/kernel",
        "bert/encoder/layer_2/attention/output/dense/bias",
        "bert/encoder/layer_2/attention/output/LayerNorm/gamma",
        "bert/encoder/layer_2/attention/output/LayerNorm/beta",
    ]
    assert error_of(google_dir, tiny_encoder(num_hidden_layers=3)) == (
        f"{google_dir}/bert_model.ckpt: checkpoint does "
        "not fit the model: num_hidden_layers is 2 in "
        "the checkpoint and 3 in the model; missing from "
        f"the checkpoint: {', '.join(missing)} and 6 more"
    )


def test_bert_tf_checkpoint_with_more_layers_than_the_model(tmp_path):
    prefix = tf.train.Checkpoint(encoder=tiny_encoder(num_hidden_layers=3)).write(
        str(tmp_path / "ckpt")
    )
    message = error_of(prefix, tiny_encoder())
    assert message.startswith(
        f"{prefix}: checkpoint does not fit the model: not in the model: encoder/"
    )
    assert message.endswith(" and 6 more")  # the 16 variables of the third block


def test_shape_mismatch_names_the_variable(tmp_path):
    shapes = google_variable_shapes()
    shapes["bert/encoder/layer_1/attention/self/query/kernel"] = (TINY["hidden_size"], 32)
    prefix = write_google_tf1_checkpoint(tmp_path / "odd", random_tensors(shapes), vocab=False)
    encoder = tiny_encoder()
    before = [w.numpy() for w in encoder.weights]
    assert error_of(prefix, encoder) == (
        f"{prefix}: checkpoint does not fit the model: shape mismatch (checkpoint vs model): "
        "bert/encoder/layer_1/attention/self/query/kernel [64, 32] vs [64, 64]"
    )
    for value, weight in zip(before, encoder.weights):  # nothing was assigned
        np.testing.assert_array_equal(value, weight.numpy())


@pytest.mark.parametrize(
    "file, expected",
    [
        (
            "bert_model.ckpt.data-00000-of-00001",
            "cannot read variable bert/encoder/layer_1/attention/output/LayerNorm/beta "
            "(data file truncated or corrupt: Read less bytes than requested)",
        ),
        (
            "bert_model.ckpt.index",
            "cannot read the checkpoint index (truncated or not "
            "a checkpoint: not an sstable (bad magic number))",
        ),
    ],
)
def test_truncated_checkpoint(file, expected, google_dir, tmp_path):
    directory = copy_of(google_dir, tmp_path)
    os.truncate(directory / file, (directory / file).stat().st_size // 2)
    assert error_of(directory, tiny_encoder()) == f"{directory}/bert_model.ckpt: {expected}"


@pytest.mark.parametrize("given", ["prefix", "directory"])
def test_missing_index_file(given, google_dir, tmp_path):
    directory = copy_of(google_dir, tmp_path)
    prefix = f"{directory}/bert_model.ckpt"
    os.remove(prefix + ".index")
    assert error_of(prefix if given == "prefix" else directory, tiny_encoder()) == (
        f"{prefix}: index file {prefix}.index is missing "
        "(the .data files cannot be read without it)"
    )


def test_a_meta_file_names_its_checkpoint(google_dir):
    prefix = f"{google_dir}/bert_model.ckpt"
    assert load_checkpoint(prefix + ".meta", tiny_encoder()).path == prefix


def test_a_directory_of_several_checkpoints_without_a_checkpoint_file(google_dir, tmp_path):
    directory = copy_of(google_dir, tmp_path)
    os.remove(directory / "checkpoint")  # the state file tf.compat.v1.train.Saver writes
    tf.train.Checkpoint(encoder=tiny_encoder()).write(str(directory / "ckpt"))
    assert error_of(directory, tiny_encoder()) == (
        f"{directory}: 2 checkpoints (bert_model.ckpt, ckpt) and no 'checkpoint' file naming the "
        "latest: pass the prefix of the one to read"
    )


def test_a_directory_of_several_keras_files(tmp_path):
    # named only: the error comes before reading either
    for name in ("tagger.keras", "classifier.keras"):
        (tmp_path / name).write_bytes(b"")
    assert error_of(tmp_path, tiny_encoder()) == (
        f"{tmp_path}: 2 .keras files (classifier.keras, tagger.keras): pass the one to read"
    )


def test_truncated_safetensors(tmp_path):
    path = tmp_path / "model.safetensors"
    save_file({"bert.embeddings.word_embeddings.weight": np.zeros((97, 64), "float32")}, path)
    os.truncate(path, path.stat().st_size // 2)
    assert error_of(path, tiny_encoder()).startswith(f"{path}: cannot read (SafetensorError: ")


def test_hugging_face_config_that_bert_tf_cannot_run(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "bert", "vocab_size": 97, "layer_norm_eps": 1e-5})
    )
    save_file(
        {"bert.embeddings.word_embeddings.weight": np.zeros((97, 64), "float32")},
        tmp_path / "model.safetensors",
    )
    with pytest.raises(ConfigError) as error:
        checkpoint_config(tmp_path)
    assert str(error.value) == (
        f"{tmp_path}/config.json: layer_norm_eps 1e-05 is not supported (bert_tf uses 1e-12)"
    )


def test_convert_fails_with_one_line_and_nonzero_exit(tmp_path):
    """A missing checkpoint and stray arguments, in `script_failures`'s one process (which also
    checks that neither prints to stdout)."""
    missing = tmp_path / "nothing_here" / "bert_model.ckpt"
    output_dir = f"--output_dir={tmp_path / 'out'}"
    assert script_failures(
        "convert_checkpoint.py",
        [f"--input_checkpoint={missing}", output_dir],
        [f"--input_checkpoint={tmp_path / 'ckpt'}", output_dir, "extra", "words"],
    ) == [
        (
            1,
            f"convert_checkpoint.py: error: --input_checkpoint={missing}: "
            f"no such checkpoint (no {missing}.index)",
        ),
        (1, "convert_checkpoint.py: error: unexpected arguments: extra words"),
    ]
    assert not (tmp_path / "out").exists()  # a failed conversion leaves no output behind


def test_a_config_that_neither_flag_gives_is_an_error_naming_both(google_dir, tmp_path):
    prefix = google_dir / "bert_model.ckpt"
    with pytest.raises(
        ValueError, match="^`bert_config_file` is required without `init_checkpoint`$"
    ):
        resolve_bert_config(None, None)
    with pytest.raises(ValueError) as error:
        resolve_bert_config(None, str(prefix), setting="input")
    assert str(error.value) == (
        "`bert_config_file` is required: no bert_config.json or "
        f"config.json lies beside `input`={prefix}"
    )
    with pytest.raises(CheckpointError) as error:
        resolve_bert_config(None, str(tmp_path / "ckpt"))
    assert str(error.value) == (
        f"`init_checkpoint`={tmp_path}/ckpt: no such checkpoint (no {tmp_path}/ckpt.index)"
    )
    config = tmp_path / "bert_config.json"
    config.write_text(json.dumps(TINY))
    assert (
        resolve_bert_config(str(config), str(tmp_path / "ckpt")).hidden_size == TINY["hidden_size"]
    )
