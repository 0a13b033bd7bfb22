"""bert_tf's Dropout: its rate and scale in each dtype, its gradient, seeds, XLA and config."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers import Dropout

SHAPE = (2048, 1024)  # 2M elements: the dropped fraction's standard deviation is 2.1e-4 at rate 0.1


@pytest.mark.parametrize("dtype", ["float32", "mixed_bfloat16", "mixed_float16"])
def test_rate_is_exact_and_the_kept_are_scaled(dtype):
    """Keras's dropout drops 10.16% in bfloat16 and 10.06% in float16 at rate 0.1 (a uniform float
    of 7 or 10 random bits); this one drops 0.1 +- 1e-3 (5 standard deviations) in every dtype."""
    layer = Dropout(0.1, seed=3, dtype=dtype)
    outputs = keras.ops.convert_to_numpy(layer(keras.ops.ones(SHAPE), training=True)).astype(
        np.float64
    )
    assert abs((outputs == 0).mean() - 0.1) < 1e-3
    kept = outputs[outputs != 0]
    # the scale in the compute dtype
    expected = float(np.asarray(1 / 0.9, dtype=layer.compute_dtype))
    np.testing.assert_array_equal(kept, expected)


def test_not_training_or_rate_zero_is_the_identity():
    x = keras.random.normal((3, 5), seed=0)
    np.testing.assert_array_equal(Dropout(0.3)(x), x)
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)


def test_masks_are_seeded_and_change_from_call_to_call():
    x = keras.ops.ones((64, 33))  # an odd element count: the last word's second half is unused
    first, second = Dropout(0.5, seed=7), Dropout(0.5, seed=7)
    a, b = first(x, training=True), first(x, training=True)
    np.testing.assert_array_equal(second(x, training=True), a)
    assert not np.array_equal(a, b)
    assert 0.4 < float(keras.ops.mean(a == 0)) < 0.6


def test_gradient_is_the_mask_times_the_scale():
    layer = Dropout(0.25, seed=1)
    x = tf.random.normal((16, 32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
    gradient = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(gradient, np.where(y.numpy() != 0, 1 / 0.75, 0.0), rtol=1e-6)


def test_compiles_with_xla():
    layer = Dropout(0.1, seed=2)
    run = tf.function(lambda x: layer(x, training=True), jit_compile=True)
    outputs = run(tf.ones((256, 128))).numpy()
    assert abs((outputs == 0).mean() - 0.1) < 0.01
    np.testing.assert_allclose(outputs[outputs != 0], 1 / 0.9, rtol=1e-6)


def test_config_round_trip_and_refusals():
    layer = Dropout(0.2, seed=5, name="drop")
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(clone) is Dropout and (clone.rate, clone.seed, clone.name) == (0.2, 5, "drop")
    with pytest.raises(ValueError, match="not in"):
        Dropout(1.0)
    with pytest.raises(ValueError, match="noise_shape"):
        Dropout(0.1, noise_shape=(None, 1))
