"""The fine-tuning models: output shapes, serialization, the encoder shared with pretraining."""

import keras
import numpy as np
import pytest

from bert_test_utils import TINY, random_encoder_inputs, tiny_encoder, write_word_vocab
from bert_tf.checkpoints import load_checkpoint
from bert_tf.errors import UserInputError
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.models import (
    BertClassifier,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.tokenization import BertTokenizer

BATCH, SEQ = 3, 12

MODELS = {
    "classifier": (lambda e: BertClassifier(e, num_classes=3), {"logits": (BATCH, 3)}),
    "regression": (lambda e: BertClassifier(e, num_classes=1), {"logits": (BATCH, 1)}),
    "span": (
        lambda e: BertSpanLabeler(e),
        {"start_logits": (BATCH, SEQ), "end_logits": (BATCH, SEQ)},
    ),
    "token": (lambda e: BertTokenClassifier(e, num_classes=5), {"logits": (BATCH, SEQ, 5)}),
}


def _inputs():
    return random_encoder_inputs(BATCH, SEQ, TINY["vocab_size"])


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_outputs_and_keras_file_round_trip(kind, tmp_path):
    build, shapes = MODELS[kind]
    model = build(tiny_encoder())
    outputs = model(_inputs())
    assert {name: tuple(value.shape) for name, value in outputs.items()} == shapes
    assert all(value.dtype == "float32" for value in outputs.values())

    path = str(tmp_path / "model.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert type(restored) is type(model)
    assert restored.get_config() == model.get_config()
    for name, value in restored(_inputs()).items():
        np.testing.assert_allclose(value, outputs[name], atol=1e-6)


def test_multiple_choice_scores_each_pair_like_the_encoder():
    model = BertMultipleChoice(tiny_encoder())
    choices = [random_encoder_inputs(BATCH, SEQ, TINY["vocab_size"], seed=i) for i in range(4)]
    # [batch, 4, seq]
    stacked = {name: np.stack([c[name] for c in choices], axis=1) for name in choices[0]}
    logits = model(stacked)["logits"]
    assert tuple(logits.shape) == (BATCH, 4)
    # Choice i's score is V . pooled_output of pair i, encoded on its own.
    kernel = model.choice_scorer.kernel.numpy()[:, 0]
    for i, pair in enumerate(choices):
        pooled = model.encoder(pair)["pooled_output"].numpy()
        np.testing.assert_allclose(logits[:, i], pooled @ kernel, atol=1e-5)


def test_dropout_is_active_only_in_training():
    model = BertClassifier(tiny_encoder(), num_classes=2, dropout_rate=0.5)
    inputs = _inputs()
    np.testing.assert_allclose(model(inputs)["logits"], model(inputs)["logits"])
    assert not np.allclose(model(inputs, training=True)["logits"], model(inputs)["logits"])


def test_a_pretrained_encoder_loads_into_a_task_model(tmp_path):
    import tensorflow as tf

    pretrainer = BertPretrainer(tiny_encoder())
    tf.train.Checkpoint(model=pretrainer).write(str(tmp_path / "ckpt"))
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    report = load_checkpoint(str(tmp_path / "ckpt"), model)
    assert report.missing == []
    inputs = _inputs()
    np.testing.assert_allclose(
        model.encoder(inputs)["pooled_output"],
        pretrainer.encoder(inputs)["pooled_output"],
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "head_initializer, std_ratio, within_two_std",
    [("normal", 1.0, False), ("truncated_normal", 0.88, True)],
)
def test_the_task_head_starts_from_its_initializer(
    head_initializer, std_ratio, within_two_std, tmp_path
):
    # Hugging Face's normal(initializer_range) by default; google-research/bert's truncated normal
    # keeps values within two standard deviations, so its heads start 0.88x as wide.
    (tmp_path / "train.txt").write_text("".join(f"word T{i}\n\n" for i in range(96)))
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=write_word_vocab(tmp_path / "vocab.txt", ["word"]),
        output_dir=str(tmp_path / "out"),
        head_initializer=head_initializer,
    )
    task = TaggingTask(options, BertTokenizer(options.vocab_file))
    model = task.build_model(tiny_encoder())
    model.build_with_dummy_inputs()
    kernel = keras.ops.convert_to_numpy(model.token_classifier.kernel)  # [64, 96]
    assert kernel.std() == pytest.approx(std_ratio * 0.02, rel=0.05)  # initializer_range 0.02
    assert (np.abs(kernel).max() <= 2 * 0.02) == within_two_std
    copy = BertTokenClassifier.from_config(model.get_config())
    assert copy.head_initializer == head_initializer


def test_an_unknown_head_initializer_is_refused():
    with pytest.raises(UserInputError, match="^`head_initializer`='zeros': must be one of"):
        BertClassifier(tiny_encoder(), num_classes=2, head_initializer="zeros")
