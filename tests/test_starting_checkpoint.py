"""`resolve_starting_checkpoint`: each format's checkpoint found once, with its config and class
names, and loaded from what was found."""

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from bert_test_utils import TINY, tiny_encoder
from bert_tf.checkpoints import (
    CheckpointError,
    CheckpointFormat,
    load_checkpoint,
    resolve_init_checkpoint,
    resolve_starting_checkpoint,
    write_tf1_checkpoint,
)
from bert_tf.checkpoints.task_heads import checkpoint_heads
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.models import BertClassifier, BertEncoder
from checkpoint_test_utils import hugging_face_config, hugging_face_state


def _architecture(config) -> dict:
    return {field: getattr(config, field) for field in TINY}


def test_a_tf1_checkpoint_with_its_config_beside_it(tmp_path):
    encoder = tiny_encoder()
    prefix = write_tf1_checkpoint(encoder, tmp_path / "bert_model.ckpt")
    encoder.bert_config.to_json_file(str(tmp_path / "bert_config.json"))
    found = resolve_starting_checkpoint(tmp_path)  # the directory: its one checkpoint
    assert (found.path, found.location) == (str(tmp_path), prefix)
    assert found.format is CheckpointFormat.TF1 and _architecture(found.config) == TINY
    assert found.config_source == str(tmp_path / "bert_config.json")
    assert found.labels is None


def test_a_fine_tuned_bert_tf_checkpoint_with_its_labels_loads_as_found(tmp_path):
    source = BertClassifier(tiny_encoder(), num_classes=2)
    source.build_with_dummy_inputs()
    save_model_checkpoint(source, str(tmp_path / "best"), {}, labels=["neg", "pos"])
    found = resolve_starting_checkpoint(tmp_path / "best")
    assert found.format is CheckpointFormat.BERT_TF
    assert found.location == str(tmp_path / "best" / "ckpt")
    assert _architecture(found.config) == TINY and found.labels == ("neg", "pos")

    (tmp_path / "best" / "labels.json").unlink()  # loading reads the weights, not what was resolved
    (tmp_path / "best" / "bert_config.json").unlink()
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    report = load_checkpoint(found, model)
    assert report.labels == ("neg", "pos") and _architecture(report.config) == TINY
    head = checkpoint_heads(report)["classifier"]
    assert head["labels"] == ("neg", "pos")
    np.testing.assert_array_equal(head["kernel"], source.classifier.kernel.numpy())


def test_a_hugging_face_checkpoint_names_its_classes(tmp_path):
    save_file(hugging_face_state(heads=("classifier",)), tmp_path / "model.safetensors")
    id2label = {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}
    config = {**hugging_face_config(), "id2label": id2label}
    (tmp_path / "config.json").write_text(json.dumps(config))
    found = resolve_starting_checkpoint(tmp_path)
    assert found.format is CheckpointFormat.SAFETENSORS
    assert found.location == str(tmp_path / "model.safetensors")
    assert _architecture(found.config) == TINY
    assert found.config_source == str(tmp_path / "config.json")
    assert found.labels == ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
    report = load_checkpoint(found, BertEncoder.from_bert_config(found.config))
    assert report.heads["classifier"]["labels"] == found.labels


def test_a_keras_file_holds_its_config(tmp_path):
    tiny_encoder().save(tmp_path / "encoder.keras")
    found = resolve_starting_checkpoint(tmp_path / "encoder.keras")
    assert found.format is CheckpointFormat.KERAS
    assert found.location == str(tmp_path / "encoder.keras")
    assert _architecture(found.config) == TINY and found.labels is None


def test_no_checkpoint_is_one_error_naming_the_path_or_the_flag(tmp_path):
    missing = r"missing: no such checkpoint \(no .*missing\.index\)$"
    with pytest.raises(CheckpointError, match=r"^[^-].*" + missing):
        resolve_starting_checkpoint(tmp_path / "missing")
    with pytest.raises(CheckpointError, match=r"^`init_checkpoint`=.*missing: no such"):
        resolve_init_checkpoint(str(tmp_path / "missing"))
    assert resolve_init_checkpoint(None) is None
