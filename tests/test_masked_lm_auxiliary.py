"""MaskedLMAuxiliary: serialization through get_config/from_config and .keras files."""

import json

import keras
import numpy as np

from bert_test_utils import TINY, random_encoder_inputs, tiny_encoder
from bert_tf.finetuning.masked_lm_auxiliary import MaskedLMAuxiliary
from bert_tf.models import BertClassifier
from bert_tf.tokenization import Vocab

TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") + tuple(
    f"w{i}" for i in range(TINY["vocab_size"] - 5)
)


def _model() -> MaskedLMAuxiliary:
    vocab = Vocab("vocab.txt", TOKENS, {token: i for i, token in enumerate(TOKENS)})
    model = MaskedLMAuxiliary(
        BertClassifier(tiny_encoder(), num_classes=3),
        vocab,
        weight=0.5,
        max_predictions=4,
        masked_lm_prob=0.2,
        seed=7,
    )
    model.build_with_dummy_inputs()
    return model


def _assert_same_model(restored, model):
    assert type(restored) is MaskedLMAuxiliary
    # build shapes: lists, not tuples
    assert json.dumps(restored.get_config()) == json.dumps(model.get_config())
    inputs = random_encoder_inputs(3, 12, TINY["vocab_size"])
    np.testing.assert_allclose(restored(inputs)["logits"], model(inputs)["logits"], atol=1e-6)
    assert len(restored.weights) == len(model.weights)
    for got, want in zip(restored.weights, model.weights):
        np.testing.assert_array_equal(got, want, err_msg=want.path)


def test_config_round_trip():
    model = _model()
    config = model.get_config()
    assert config["vocab"] == {
        "size": len(TOKENS),
        "mask_id": 4,
        "cls_id": 2,
        "sep_id": 3,
        "pad_id": 0,
    }
    restored = MaskedLMAuxiliary.from_config(config)
    restored.build_with_dummy_inputs()
    restored.set_weights(model.get_weights())
    _assert_same_model(restored, model)


def test_keras_file_round_trip(tmp_path):
    model = _model()
    path = str(tmp_path / "model.keras")
    model.save(path)
    _assert_same_model(keras.saving.load_model(path), model)
