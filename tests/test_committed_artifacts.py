"""Artifacts written by earlier code still load through the public paths, with the same outputs.

`tests/fixtures/committed_artifacts/make_artifacts.py` wrote them: a `.keras` file (registered
class names), a `run_pretraining.py` checkpoint (checkpoint variable paths) and an
`export_model.py` SavedModel.
"""

import pathlib
import tarfile

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of the text signature)

from bert_tf import BertEncoder
from bert_tf.checkpoints import checkpoint_config, load_checkpoint
from bert_tf.models import BertPretrainer
from bert_tf.pretraining.checkpoints import pretraining_checkpoint
from bert_tf.training.optimization import create_optimizer

ARTIFACTS = pathlib.Path(__file__).resolve().parent / "fixtures" / "committed_artifacts"
EXPECTED = dict(np.load(ARTIFACTS / "expected.npz"))


def stored(part: str) -> dict[str, np.ndarray]:
    """The arrays of `expected.npz` under `part/`, by the name after it."""
    return {
        name.split("/", 1)[1]: value
        for name, value in EXPECTED.items()
        if name.startswith(f"{part}/")
    }


FEATURES = stored("input")
PRETRAINER_INPUTS = {
    k: FEATURES[k] for k in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
}
TEXTS = ["the movie was great", "a dull and weak film"]  # as make_artifacts.py


def assert_outputs(outputs, part: str) -> None:
    expected = stored(part)
    assert sorted(outputs) == sorted(expected)
    for name, value in expected.items():
        if value.dtype.kind == "U":
            np.testing.assert_array_equal(
                np.asarray(outputs[name]).astype(str), value, err_msg=name
            )
        else:
            np.testing.assert_allclose(outputs[name], value, atol=1e-5, err_msg=name)


def test_keras_file_loads_with_the_same_outputs():
    model = keras.saving.load_model(ARTIFACTS / "pretrainer.keras")
    assert isinstance(model, BertPretrainer) and isinstance(model.encoder, BertEncoder)
    assert_outputs({k: v.numpy() for k, v in model(PRETRAINER_INPUTS).items()}, "keras")


def pretrainer_for_checkpoint() -> BertPretrainer:
    config = checkpoint_config(ARTIFACTS / "checkpoint")  # its bert_config.json
    model = BertPretrainer(BertEncoder.from_bert_config(config))
    model.build_with_dummy_inputs()
    return model


def test_checkpoint_loads_every_variable_with_the_same_outputs():
    model = pretrainer_for_checkpoint()
    report = load_checkpoint(ARTIFACTS / "checkpoint", model)
    assert (report.format, report.missing, report.unused) == ("bert_tf", [], [])
    assert_outputs({k: v.numpy() for k, v in model(PRETRAINER_INPUTS).items()}, "checkpoint")


def test_checkpoint_resumes_with_its_optimizer():
    """A resume restores every saved object (model, encoder, optimizer slots and step) by path."""
    model = pretrainer_for_checkpoint()
    optimizer = create_optimizer("adamw", 1e-4, num_train_steps=1, num_warmup_steps=0)
    optimizer.build(model.trainable_variables)
    checkpoint = pretraining_checkpoint(model, optimizer)
    checkpoint.restore(str(ARTIFACTS / "checkpoint" / "ckpt-1")).assert_consumed()
    assert int(optimizer.iterations.numpy()) == 1
    assert_outputs({k: v.numpy() for k, v in model(PRETRAINER_INPUTS).items()}, "checkpoint")


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("committed")
    with tarfile.open(ARTIFACTS / "export.tar.xz") as archive:
        archive.extractall(directory, filter="data")
    return tf.saved_model.load(str(directory / "export"))


def test_saved_model_serving_default_gives_the_same_outputs(saved_model):
    ids = {
        "input_word_ids": FEATURES["input_ids"],
        "input_mask": FEATURES["input_mask"],
        "input_type_ids": FEATURES["segment_ids"],
    }
    serving_default = saved_model.signatures["serving_default"]
    outputs = serving_default(**{k: tf.constant(v) for k, v in ids.items()})
    assert_outputs({k: v.numpy() for k, v in outputs.items()}, "serving_default")


def test_saved_model_text_signature_gives_the_same_outputs(saved_model):
    outputs = saved_model.signatures["text"](text_a=tf.constant(TEXTS))
    assert_outputs({k: v.numpy() for k, v in outputs.items()}, "text")
