"""Model Garden's BertPretrainerV2 + BertEncoder (tf_keras) as the benchmarks' peer.

Built from our `BertConfig` with exact GELU like ours, with Model Garden's own
AdamWeightDecay (weight decay 0.01 except LayerNorm and biases, epsilon 1e-6) and
global-norm clipping at 1.0, as google-research/bert trains. `train_step` takes
batches in our feature schema (`bert_tf.data.pretraining_features`).
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.bert_config import BertConfig


def build(config: BertConfig, learning_rate, dtype: str = "float32"):
    """(pretrainer, optimizer); `learning_rate` is a float or a tf_keras schedule."""
    import tensorflow_models as tfm
    import tf_keras
    from official.modeling.optimization import legacy_adamw

    tf_keras.mixed_precision.set_global_policy(
        "mixed_bfloat16" if dtype == "bfloat16" else "float32"
    )
    encoder = tfm.nlp.networks.BertEncoder(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        inner_dim=config.intermediate_size,
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=False),
        output_dropout=config.hidden_dropout_prob,
        attention_dropout=config.attention_probs_dropout_prob,
    )
    pretrainer = tfm.nlp.models.BertPretrainerV2(
        encoder_network=encoder,
        classification_heads=[
            tfm.nlp.layers.ClassificationHead(
                inner_dim=config.hidden_size, num_classes=2, name="next_sentence"
            )
        ],
    )
    optimizer = legacy_adamw.AdamWeightDecay(
        learning_rate,
        weight_decay_rate=0.01,
        epsilon=1e-6,
        gradient_clip_norm=0.0,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    )
    return pretrainer, optimizer


def warmup_linear_decay(learning_rate: float, num_train_steps: int, num_warmup_steps: int):
    """Model Garden's google-research/bert schedule (ours: bert_tf.training.optimization)."""
    import tf_keras
    from official.modeling.optimization import lr_schedule

    decay = tf_keras.optimizers.schedules.PolynomialDecay(
        learning_rate, num_train_steps, 0.0, power=1.0
    )
    return lr_schedule.LinearWarmup(decay, num_warmup_steps, 0.0)


def model_inputs(features):
    return {
        "input_word_ids": features["input_ids"],
        "input_mask": features["input_mask"],
        "input_type_ids": features["segment_ids"],
        "masked_lm_positions": features["masked_lm_positions"],
    }


def logits(pretrainer, features, training: bool = False):
    """float32 (masked-LM logits `[batch, predictions, vocab]`, next-sentence `[batch, 2]`)."""
    outputs = pretrainer(model_inputs(features), training=training)
    return tf.cast(outputs["mlm_logits"], tf.float32), tf.cast(outputs["next_sentence"], tf.float32)


def train_step(pretrainer, optimizer, jit_compile: bool):
    """A `tf.function` running one optimizer step on a batch of features."""

    @tf.function(jit_compile=jit_compile)
    def step(features):
        with tf.GradientTape() as tape:
            mlm_logits, nsp_logits = logits(pretrainer, features, training=True)
            mlm = tf.keras.losses.sparse_categorical_crossentropy(
                features["masked_lm_ids"], mlm_logits, from_logits=True
            )
            nsp = tf.keras.losses.sparse_categorical_crossentropy(
                features["next_sentence_labels"], nsp_logits, from_logits=True
            )
            weights = features["masked_lm_weights"]
            loss = tf.reduce_sum(mlm * weights) / tf.reduce_sum(weights) + tf.reduce_mean(nsp)
        grads = tape.gradient(loss, pretrainer.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        optimizer.apply_gradients(zip(grads, pretrainer.trainable_variables))

    return step
