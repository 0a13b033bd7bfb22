"""export_hub_pair: TF-Hub-style preprocessing + encoder (with mlm), loaded without bert_tf."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import run_without_bert_tf, tiny_encoder, write_word_vocab
from bert_tf.export import export_hub_pair, with_weights_in
from bert_tf.models import BertPretrainer
from bert_tf.tokenization import BertTokenizer

TEXTS = ["the cat sat on the mat", "a dog ran in the park", "", "Ünïcode wörds here"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hub")
    tokenizer = BertTokenizer(write_word_vocab(directory / "vocab.txt", TEXTS))
    # never called: heads unbuilt
    model = BertPretrainer(tiny_encoder(vocab_size=tokenizer.vocab_size))
    paths = export_hub_pair(model, directory / "export", tokenizer=tokenizer, seq_length=16)
    return model, tokenizer, paths


def test_preprocessing_equals_the_tokenizer(exported):
    _, tokenizer, paths = exported
    pre = tf.saved_model.load(paths["preprocessing"])
    got = pre(tf.constant(TEXTS))
    expected = tokenizer.pack_inputs([tokenizer.tokenize(TEXTS)], 16)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])
    a, b = pre.tokenize(tf.constant(TEXTS)), pre.tokenize(tf.constant(TEXTS[::-1]))
    # [batch, words, pieces], as TF Hub's
    assert a.to_list() == tokenizer.tokenize_words(TEXTS).to_list()
    flat_a, flat_b = tokenizer.tokenize(TEXTS), tokenizer.tokenize(TEXTS[::-1])
    assert a.merge_dims(1, 2).to_list() == flat_a.to_list()
    expected = tokenizer.pack_inputs([flat_a, flat_b], 8)
    # by word or flat, as given
    for segments in ([a, b], [flat_a, b], [a, flat_b], [flat_a, flat_b]):
        packed = pre.bert_pack_inputs(segments, tf.constant(8))
        for name in expected:
            np.testing.assert_array_equal(packed[name], expected[name])
    np.testing.assert_array_equal(
        pre.bert_pack_inputs([a])["input_word_ids"], got["input_word_ids"]
    )
    assert pre.tokenize.get_special_tokens_dict()["mask_id"] == tokenizer.vocab.mask_id
    assert os.path.basename(pre.tokenize.vocab_file.asset_path.numpy().decode()) == "vocab.txt"


def test_encoder_and_mlm_equal_the_model(exported):
    model, tokenizer, paths = exported
    encoder = tf.saved_model.load(paths["encoder"])
    inputs = tokenizer.pack_inputs([tokenizer.tokenize(TEXTS)], 16)
    got, expected = encoder(inputs), model.encoder(inputs)
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(got["encoder_outputs"][0], expected["encoder_outputs"][0], atol=1e-5)
    served = encoder.signatures["serving_default"](**inputs)
    np.testing.assert_allclose(
        served["encoder_outputs"][:, -1], expected["sequence_output"], atol=1e-5
    )
    positions = tf.constant([[1, 2]] * len(TEXTS), tf.int32)
    mlm = encoder.mlm({**inputs, "masked_lm_positions": positions})["mlm_logits"]
    reference = model(
        {
            "input_ids": inputs["input_word_ids"],
            "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"],
            "masked_lm_positions": positions,
        }
    )
    np.testing.assert_allclose(mlm, reference["masked_lm_logits"], atol=1e-5)
    beyond_vocab = {**inputs, "input_word_ids": inputs["input_word_ids"] + tokenizer.vocab_size}
    for call in (encoder, lambda x: encoder.mlm({**x, "masked_lm_positions": positions})):
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="input_word_ids must be < the vocab size"
        ):
            call(beyond_vocab)
    for bad, message in [
        (-1, "masked_lm_positions must be >= 0"),  # a raw GatherV2 error, unnamed, before
        (100, "masked_lm_positions must be < the sequence length of input_word_ids"),
    ]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            encoder.mlm(
                {
                    **inputs,
                    "masked_lm_positions": tf.tensor_scatter_nd_update(positions, [[0, 1]], [bad]),
                }
            )


def test_fill_mask_in_a_fresh_process_without_bert_tf(exported, tmp_path):
    model, tokenizer, paths = exported
    stdout = run_without_bert_tf(
        f"""
        pre = tf.saved_model.load({paths["preprocessing"]!r})
        encoder = tf.saved_model.load({paths["encoder"]!r})
        inputs = pre(tf.constant(["the cat [MASK] on the mat"]))
        logits = encoder.mlm({{**inputs, "masked_lm_positions": tf.constant([[3]])}})["mlm_logits"]
        print(int(tf.argmax(logits[0, 0])))
    """,
        tmp_path,
    )
    ids = tokenizer.pack_inputs([tokenizer.tokenize(["the cat [MASK] on the mat"])], 16)
    assert ids["input_word_ids"][0, 3] == tokenizer.vocab.mask_id
    expected = model(
        {
            "input_ids": ids["input_word_ids"],
            "input_mask": ids["input_mask"],
            "segment_ids": ids["input_type_ids"],
            "masked_lm_positions": tf.constant([[3]]),
        }
    )
    assert int(stdout.strip().splitlines()[-1]) == int(
        tf.argmax(expected["masked_lm_logits"][0, 0])
    )


def test_tf_hub_fine_tunes_the_encoder(tmp_path):
    """`hub.KerasLayer(encoder, trainable=True)`, as TF Hub's BERT tutorials use it, trains the
    encoder's weights, with dropout on in training only."""
    import tensorflow_hub as hub
    import tf_keras

    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", TEXTS))
    encoder = tiny_encoder(dropout=0.1, vocab_size=tokenizer.vocab_size)
    inputs = tokenizer.pack_inputs([tokenizer.tokenize(TEXTS)], 16)
    expected = encoder(inputs)["pooled_output"]
    layer = hub.KerasLayer(
        export_hub_pair(encoder, tmp_path / "export", tokenizer=tokenizer, seq_length=16)[
            "encoder"
        ],
        trainable=True,
    )
    np.testing.assert_allclose(layer(inputs)["pooled_output"], expected, atol=1e-5)
    assert not np.allclose(layer(inputs, training=True)["pooled_output"], expected, atol=1e-3)
    assert len(layer.trainable_weights) == len(encoder.trainable_variables)

    keras_inputs = {name: tf_keras.Input((None,), dtype=tf.int32, name=name) for name in inputs}
    classifier = tf_keras.Model(
        keras_inputs, tf_keras.layers.Dense(2)(layer(keras_inputs)["pooled_output"])
    )
    classifier.compile("adam", tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [w.numpy() for w in layer.trainable_weights]
    classifier.fit(inputs, np.array([0, 1, 0, 1]), epochs=2, verbose=0)
    changed = [not np.array_equal(a, w.numpy()) for a, w in zip(before, layer.trainable_weights)]
    assert all(changed), sum(changed)


def test_a_bfloat16_pair_serves_float32_outputs_close_to_the_model(tmp_path):
    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", TEXTS))
    model = BertPretrainer(tiny_encoder(vocab_size=tokenizer.vocab_size))
    with pytest.raises(ValueError, match="^with_weights_in: bert_pretrainer.* build it .* first$"):
        with_weights_in(model, "bfloat16")  # its heads are not built yet
    model.build_with_dummy_inputs()
    paths = export_hub_pair(
        with_weights_in(model, "bfloat16"), tmp_path / "export", tokenizer=tokenizer, seq_length=16
    )
    encoder = tf.saved_model.load(paths["encoder"])
    assert "float32" not in {v.dtype.name for v in encoder.variables if "kernel" in v.name}
    inputs = tokenizer.pack_inputs([tokenizer.tokenize(TEXTS)], 16)
    got, expected = encoder(inputs), model.encoder(inputs)
    assert got["sequence_output"].dtype == tf.float32
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"], atol=0.05)
    positions = tf.constant([[1, 2]] * len(TEXTS), tf.int32)
    mlm = encoder.mlm({**inputs, "masked_lm_positions": positions})["mlm_logits"]
    reference = model(
        {
            "input_ids": inputs["input_word_ids"],
            "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"],
            "masked_lm_positions": positions,
        }
    )
    np.testing.assert_allclose(mlm, reference["masked_lm_logits"], atol=0.05)
    # An encoder without heads converts the same way.
    alone = with_weights_in(model.encoder, "bfloat16")
    assert alone.pooler.kernel.dtype == "bfloat16"
    np.testing.assert_allclose(
        alone(inputs)["sequence_output"], expected["sequence_output"], atol=0.05
    )
