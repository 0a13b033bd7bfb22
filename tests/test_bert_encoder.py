"""BertEncoder: outputs, masking, sequence lengths, precision, XLA and serialization."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import TINY, random_encoder_inputs, tiny_encoder
from bert_tf import BertConfig, BertEncoder
from bert_tf.layers import (
    BertEmbeddings,
    MaskedLMHead,
    SelfAttention,
    TransformerBlock,
    get_activation,
)
from bert_tf.models import BertClassifier, BertPretrainer


def test_output_structure():
    encoder = tiny_encoder()
    outputs = encoder(random_encoder_inputs(3, 16, TINY["vocab_size"]))
    assert set(outputs) == {"sequence_output", "pooled_output", "encoder_outputs"}
    assert outputs["sequence_output"].shape == (3, 16, 64)
    assert outputs["pooled_output"].shape == (3, 64)
    assert [t.shape for t in outputs["encoder_outputs"]] == [(3, 16, 64)] * 2
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        assert encoder.input[name].dtype == "int32"


def test_pooled_output_is_tanh_dense_on_cls():
    encoder = tiny_encoder()
    outputs = encoder(random_encoder_inputs(2, 8, TINY["vocab_size"]))
    kernel, bias = encoder.pooler.get_weights()
    expected = np.tanh(outputs["sequence_output"].numpy()[:, 0] @ kernel + bias)
    np.testing.assert_allclose(outputs["pooled_output"], expected, atol=1e-6)


def test_padding_invariance():
    encoder = tiny_encoder()
    lengths = [5, 9, 12]
    short = random_encoder_inputs(3, 12, TINY["vocab_size"], lengths=lengths)
    long = {name: np.pad(value, [(0, 0), (0, 20)]) for name, value in short.items()}
    out_short, out_long = encoder(short), encoder(long)
    for i, n in enumerate(lengths):
        np.testing.assert_allclose(
            out_long["sequence_output"][i, :n], out_short["sequence_output"][i, :n], atol=1e-5
        )
        for a, b in zip(out_long["encoder_outputs"], out_short["encoder_outputs"]):
            np.testing.assert_allclose(a[i, :n], b[i, :n], atol=1e-5)
    np.testing.assert_allclose(out_long["pooled_output"], out_short["pooled_output"], atol=1e-5)


def test_padding_changes_output_without_mask():
    # The invariance above must come from the mask: without it, padding leaks in.
    encoder = tiny_encoder()
    inputs = random_encoder_inputs(1, 12, TINY["vocab_size"], lengths=[6])
    unmasked = dict(inputs, input_mask=np.ones_like(inputs["input_mask"]))
    diff = np.abs(
        encoder(inputs)["sequence_output"][0, :6] - encoder(unmasked)["sequence_output"][0, :6]
    )
    assert float(np.max(diff)) > 1e-3


@pytest.mark.parametrize("seq", [1, 7, 64])
def test_any_sequence_length_up_to_max_positions(seq):
    encoder = tiny_encoder()
    outputs = encoder(random_encoder_inputs(2, seq, TINY["vocab_size"], lengths=[seq, seq]))
    assert outputs["sequence_output"].shape == (2, seq, 64)


def test_a_sequence_beyond_max_positions_names_the_limit():
    with pytest.raises(ValueError, match="sequence length 65 exceeds max_position_embeddings 64"):
        tiny_encoder()(random_encoder_inputs(2, 65, TINY["vocab_size"]))


def test_gelu_forms():
    x = np.linspace(-4, 4, 81).astype("float32")
    exact = 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2)))
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(get_activation("gelu")(x), exact, atol=1e-6)
    np.testing.assert_allclose(get_activation("gelu_approximate")(x), tanh_form, atol=1e-6)
    assert np.max(np.abs(exact - tanh_form)) > 1e-4


def test_hidden_act_reaches_the_blocks():
    # Initialised wide, so the intermediate activations reach where the two GELU forms differ:
    # at 0.02 they stay near 0 and the outputs differ by ~1e-6, float32 noise (4% of seeds below
    # it); at 0.2 by 6e-4 to 2e-3 over 100 seeds.
    keras.utils.set_random_seed(0)
    exact = tiny_encoder(initializer_range=0.2)
    approx = tiny_encoder(hidden_act="gelu_approximate", initializer_range=0.2)
    approx.set_weights(exact.get_weights())
    inputs = random_encoder_inputs(2, 8, TINY["vocab_size"])
    diff = np.abs(exact(inputs)["sequence_output"] - approx(inputs)["sequence_output"])
    assert 1e-4 < float(np.max(diff)) < 1e-2


def test_dropout_only_in_training():
    encoder = tiny_encoder(dropout=0.1)
    inputs = random_encoder_inputs(2, 8, TINY["vocab_size"])
    np.testing.assert_array_equal(
        encoder(inputs)["sequence_output"], encoder(inputs)["sequence_output"]
    )
    assert not np.allclose(
        encoder(inputs, training=True)["sequence_output"], encoder(inputs)["sequence_output"]
    )


def test_call_at_positions_and_pooled_output_equal_the_full_pass_in_values_and_gradients():
    encoder = tiny_encoder()
    inputs = random_encoder_inputs(3, 16, TINY["vocab_size"], lengths=[16, 9, 4])
    # Repeated positions, position 0, and positions in the padding, as padded prediction slots have.
    positions = np.array([[1, 7, 15], [0, 3, 3], [2, 0, 12]], "int32")
    probe = tf.random.stateless_normal((3, 3, TINY["hidden_size"]), seed=(1, 2))

    def loss_and_gradients(outputs_fn):
        with tf.GradientTape() as tape:
            outputs = outputs_fn()
            loss = tf.reduce_sum(outputs["sequence_output"] * probe) + tf.reduce_sum(
                outputs["pooled_output"]
            )
        return outputs, tape.gradient(loss, encoder.trainable_variables)

    def full():
        outputs = encoder(inputs, training=True)
        gathered = tf.gather(outputs["sequence_output"], positions, batch_dims=1)
        return {"sequence_output": gathered, "pooled_output": outputs["pooled_output"]}

    expected, expected_gradients = loss_and_gradients(full)
    got, gradients = loss_and_gradients(
        lambda: encoder.call_at_positions(inputs, positions, training=True)
    )
    assert got["sequence_output"].shape == (3, 3, TINY["hidden_size"])
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=1e-5)
    for variable, got_gradient, expected_gradient in zip(
        encoder.trainable_variables, gradients, expected_gradients
    ):
        np.testing.assert_allclose(
            tf.convert_to_tensor(got_gradient),
            tf.convert_to_tensor(expected_gradient),
            rtol=1e-5,
            atol=1e-5,
            err_msg=variable.path,
        )
    # A classifier's pooled output alone: the last block at [CLS] only.
    np.testing.assert_allclose(encoder.pooled_output(inputs), expected["pooled_output"], atol=1e-5)
    # Under XLA too (static shapes).
    xla = tf.function(lambda: encoder.call_at_positions(inputs, positions), jit_compile=True)()
    np.testing.assert_allclose(xla["sequence_output"], expected["sequence_output"], atol=1e-4)


def test_tf_function_and_jit_compile_match_eager():
    encoder = tiny_encoder()
    inputs = random_encoder_inputs(2, 16, TINY["vocab_size"])
    eager = encoder(inputs)["sequence_output"]
    graph = tf.function(lambda x: encoder(x)["sequence_output"])(inputs)
    xla = tf.function(lambda x: encoder(x)["sequence_output"], jit_compile=True)(inputs)
    np.testing.assert_allclose(graph, eager, atol=1e-5)
    np.testing.assert_allclose(xla, eager, atol=1e-4)


@pytest.mark.parametrize("policy,tolerance", [("mixed_bfloat16", 0.1), ("mixed_float16", 0.02)])
def test_mixed_precision_close_to_float32(policy, tolerance):
    reference = tiny_encoder()
    mixed = BertEncoder(**reference.bert_config.encoder_kwargs(), dtype=policy)
    mixed.set_weights(reference.get_weights())
    assert all(w.dtype == "float32" for w in mixed.weights)
    # LayerNorm runs in float32 under any policy.
    assert mixed.transformer_layers[0].output_layer_norm.compute_dtype == "float32"
    assert mixed.embeddings.layer_norm.compute_dtype == "float32"
    inputs = random_encoder_inputs(2, 16, TINY["vocab_size"])
    expected = reference(inputs)["sequence_output"].numpy()
    got = mixed(inputs)["sequence_output"]
    assert got.dtype == policy.split("_")[1]
    got = tf.cast(got, tf.float32).numpy()
    assert np.isfinite(got).all()
    # LayerNorm outputs are O(1): compare the absolute error to that scale.
    assert np.max(np.abs(got - expected)) < tolerance
    assert np.mean(np.abs(got - expected)) < tolerance / 5


def test_base_config_has_110m_parameters():
    config = BertConfig.from_json_file("configs/base/bert_config.json")
    assert BertEncoder.from_bert_config(config).count_params() == 109_482_240  # the paper's "110M"


def test_constructor_rejects_inconsistent_sizes():
    with pytest.raises(ValueError, match="num_attention_heads"):
        BertEncoder(vocab_size=10, hidden_size=10, num_attention_heads=3)


# Every constructor argument away from its default: a key that get_config drops shows.
LAYERS = [
    (
        BertEmbeddings,
        dict(
            vocab_size=11,
            hidden_size=8,
            max_position_embeddings=16,
            type_vocab_size=2,
            hidden_dropout_prob=0.2,
            initializer_range=0.05,
        ),
    ),
    (
        SelfAttention,
        dict(
            hidden_size=8,
            num_attention_heads=2,
            attention_probs_dropout_prob=0.3,
            initializer_range=0.05,
        ),
    ),
    (
        TransformerBlock,
        dict(
            hidden_size=8,
            num_attention_heads=2,
            intermediate_size=16,
            hidden_act="gelu_approximate",
            hidden_dropout_prob=0.2,
            attention_probs_dropout_prob=0.3,
            initializer_range=0.05,
        ),
    ),
    (MaskedLMHead, dict(vocab_size=11, hidden_size=8, hidden_act="relu", initializer_range=0.05)),
]


@pytest.mark.parametrize("layer_class, kwargs", LAYERS, ids=[c.__name__ for c, _ in LAYERS])
def test_layer_config_round_trip(layer_class, kwargs):
    layer = layer_class(**kwargs, name="custom")
    restored = layer_class.from_config(layer.get_config())
    assert {name: getattr(restored, name) for name in kwargs} == kwargs
    assert restored.name == "custom"


def test_encoder_config_round_trip():
    kwargs = dict(
        **TINY,
        hidden_act="gelu_approximate",
        hidden_dropout_prob=0.2,
        attention_probs_dropout_prob=0.3,
        initializer_range=0.05,
        extra={"directionality": "bidi"},
    )
    encoder = BertEncoder(**kwargs, name="custom")
    restored = BertEncoder.from_config(encoder.get_config())
    assert {name: getattr(restored, name) for name in kwargs} == kwargs
    assert restored.name == "custom" and restored.bert_config == encoder.bert_config
    restored.set_weights(encoder.get_weights())
    inputs = random_encoder_inputs(2, 8, TINY["vocab_size"], lengths=[8, 5])
    expected, got = encoder(inputs), restored(inputs)
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_array_equal(got[name], expected[name])


def test_mixed_precision_survives_the_config_round_trip_and_reaches_the_heads():
    encoder = BertEncoder(**TINY, dtype="mixed_bfloat16")
    restored = BertEncoder.from_config(encoder.get_config())
    for model in (encoder, restored):
        assert model.dtype_policy.name == "mixed_bfloat16"
        assert (
            model(random_encoder_inputs(2, 8, TINY["vocab_size"]))["sequence_output"].dtype
            == "bfloat16"
        )
    assert BertClassifier(restored, num_classes=2).classifier.dtype_policy.name == "mixed_bfloat16"
    pretrainer = BertPretrainer(restored)
    assert pretrainer.masked_lm_head.dtype_policy.name == "mixed_bfloat16"
    assert pretrainer.next_sentence_head.dtype_policy.name == "mixed_bfloat16"


def test_a_mixed_float16_encoder_gets_loss_scaling_from_compile():
    encoder = BertEncoder(**TINY, dtype="mixed_float16")
    for model in (BertClassifier(encoder, num_classes=2), BertPretrainer(encoder)):
        model.compile(optimizer="adam")
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer), type(
            model
        ).__name__


def test_extra_config_keys_survive_the_encoder(tmp_path):
    source = tmp_path / "bert_config.json"
    BertConfig(
        **TINY, extra={"directionality": "bidi", "pooler_type": "first_token_transform"}
    ).to_json_file(source)
    encoder = BertEncoder.from_config_file(source)
    written = tmp_path / "written.json"
    # as the fine-tuning driver writes it beside its checkpoints
    encoder.bert_config.to_json_file(written)
    assert written.read_text() == source.read_text()
    assert BertEncoder.from_config(encoder.get_config()).bert_config == encoder.bert_config


def test_encoder_keras_file_round_trip(tmp_path):
    encoder = tiny_encoder(dropout=0.1)
    path = tmp_path / "encoder.keras"
    encoder.save(path)
    restored = keras.models.load_model(path)
    assert isinstance(restored, BertEncoder)
    inputs = random_encoder_inputs(2, 16, TINY["vocab_size"])
    for a, b in zip(tf.nest.flatten(encoder(inputs)), tf.nest.flatten(restored(inputs))):
        np.testing.assert_array_equal(a, b)
