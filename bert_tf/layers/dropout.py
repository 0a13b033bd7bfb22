"""`Dropout`: Keras's dropout layer, drawing 16 random bits per element."""

from __future__ import annotations

import keras
import tensorflow as tf

from bert_tf.errors import UserInputError

_BITS = 16
_LEVELS = 1 << _BITS


@keras.saving.register_keras_serializable(package="bert_tf")
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout`, with an exact rate in every dtype and half the random draws.

    Keras draws one uniform float per element in the layer's compute dtype. In
    bfloat16 that float has 7 random bits, so a rate of 0.1 drops 13/128 of the
    elements (10.16%); in float16, 103/1024. Here each 32-bit Philox word gives two
    elements 16 bits each, and an element is dropped when its bits fall below
    `round(rate * 65536)`: the rate is exact to 1/65536 whatever the dtype, and a
    step draws half as many words. The kept elements are scaled by `1 / (1 - rate)`, as in
    Keras; the layer's variables (its seed state) are Keras's, so checkpoints load
    either way.

    Under a strategy of several replicas, the replica's id is folded into the seed:
    Keras's seed state is mirrored, so the replicas would otherwise drop the same
    elements of their different examples.

    Args:
        rate: the fraction of the inputs to drop, in [0, 1).
        seed: the seed of the layer's random draws; None: Keras's default.
        **kwargs: `keras.layers.Layer` arguments, such as `name` and `dtype`; `noise_shape`
            is refused.

    Raises:
        UserInputError: a `rate` outside [0, 1).

    Example:
    >>> layer = Dropout(0.5, seed=1)
    >>> x = keras.ops.ones((2, 4))
    >>> sorted(set(keras.ops.convert_to_numpy(layer(x, training=True)).ravel().tolist()))
    [0.0, 2.0]
    >>> bool(keras.ops.all(layer(x) == x))  # not training: the identity
    True
    """

    def __init__(self, rate, seed=None, **kwargs):
        if kwargs.get("noise_shape") is not None:
            raise ValueError(
                "bert_tf's Dropout draws one mask element per input element: noise_shape is not "
                "supported"
            )
        if not 0 <= rate < 1:
            raise UserInputError(f"dropout rate {rate} is not in [0, 1)")
        super().__init__(rate, seed=seed, **kwargs)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        # Keras's seed state is int64; TensorFlow's
        # stateless ops want int32 under XLA (as in Keras).
        seed = tf.cast(tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32)
        replicas = tf.distribute.get_replica_context()
        if replicas is not None and replicas.num_replicas_in_sync > 1:
            seed = tf.random.experimental.stateless_fold_in(seed, replicas.replica_id_in_sync_group)
        size = tf.size(inputs)
        words = tf.random.stateless_uniform(
            [(size + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32
        )
        bits = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size]  # two 16-bit halves per word
        threshold = tf.constant(min(round(self.rate * _LEVELS), _LEVELS - 1), tf.uint16)
        keep = tf.reshape(bits, tf.shape(inputs)) >= threshold
        scale = tf.constant(1.0 / (1.0 - self.rate), inputs.dtype)
        return tf.where(keep, inputs * scale, tf.zeros((), inputs.dtype))
