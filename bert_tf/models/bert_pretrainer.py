"""`BertPretrainer`: a `BertEncoder` with the masked-LM head and, optionally, the next-sentence
head."""

from __future__ import annotations

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.metrics.next_sentence_auc import NextSentenceAUC
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.pretraining_loss import pretraining_losses
from bert_tf.models.sampled_masked_lm import sampled_masked_lm_scores
from bert_tf.models.train_step import GlobalClippingTrainStep


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(GlobalClippingTrainStep, keras.Model):
    """BERT's pretraining model: masked LM, plus next-sentence prediction unless
    `next_sentence_prediction=False` (RoBERTa's masked LM alone: no next-sentence head,
    output, loss or metric; the features need no `next_sentence_labels`).

    It is called on a batch of the pretraining TFRecord features
    (`bert_tf.data.pretraining_features`) as they are: `input_ids`,
    `input_mask`, `segment_ids` and `masked_lm_positions` are used; the
    other features are the targets, read by `compute_loss` and `compute_metrics`,
    so `model.fit(dataset)` needs no separate labels. `fit` clips the global batch's
    gradients to norm 1.0, as google-research/bert does (`GlobalClippingTrainStep`);
    `run_pretraining.py` runs its own loop (`PretrainingRunner`) instead.

    Outputs, a dict of float32 logits:
        `masked_lm_logits`: `[batch, max_predictions_per_seq, vocab_size]`.
        `next_sentence_logits`: `[batch, 2]`; class 0 means B follows A.

    With `masked_lm_samples > 0`, training steps score each prediction against the
    batch's labels plus that many random vocab ids instead of the whole vocab (a sampled
    softmax, `sampled_masked_lm`): `masked_lm_logits` is then replaced by the
    `[batch, predictions]` scores `masked_lm_label_logits`, `masked_lm_log_partition`
    and `masked_lm_best_logits`, and the training accuracy is against those candidates.
    Inference (`training=False`) and evaluation score the whole vocab.

    Metrics: `masked_lm_accuracy` and `masked_lm_loss` weighted by
    `masked_lm_weights`, `next_sentence_accuracy`, `next_sentence_loss` and
    `next_sentence_auc` (`NextSentenceAUC`: a ranking, which shows next-sentence learning
    before the accuracy passes the majority label).

    Args:
        encoder: the `BertEncoder`; the heads take its dtype policy.
        masked_lm_samples: sampled-softmax draws per training step; 0: the whole vocab.
        next_sentence_prediction: False: masked LM alone.
        **kwargs: `keras.Model` arguments, such as `name`.

    Example:
    >>> encoder = BertEncoder(vocab_size=100, hidden_size=16, num_hidden_layers=1,
    ...                       num_attention_heads=2, intermediate_size=32)
    >>> model = BertPretrainer(encoder)
    >>> ones = keras.ops.ones((2, 8), "int32")
    >>> outputs = model({"input_ids": ones, "input_mask": ones, "segment_ids": 0 * ones,
    ...                  "masked_lm_positions": keras.ops.ones((2, 3), "int32")})
    >>> tuple(outputs["masked_lm_logits"].shape), tuple(outputs["next_sentence_logits"].shape)
    ((2, 3, 100), (2, 2))
    """

    def __init__(
        self,
        encoder: BertEncoder,
        masked_lm_samples: int = 0,
        next_sentence_prediction: bool = True,
        **kwargs,
    ):
        # The encoder's policy: `compile` then adds loss scaling to a mixed_float16 model.
        super().__init__(**{"dtype": encoder.dtype_policy, **kwargs})
        self.encoder = encoder
        self.masked_lm_samples = masked_lm_samples
        self.next_sentence_prediction = next_sentence_prediction
        self._sampling_seed = keras.random.SeedGenerator() if masked_lm_samples else None
        self.masked_lm_head = MaskedLMHead.for_encoder(encoder)
        # Glorot uniform, as Model Garden's next-sentence head, not the encoder's truncated normal
        # (stddev `initializer_range`): a wider output passes next-sentence prediction's gradient
        # into the encoder from the start, which learns it sooner (docs/design-notes.md).
        self.next_sentence_head = (
            keras.layers.Dense(
                2,
                kernel_initializer="glorot_uniform",
                dtype=encoder.dtype_policy,
                name="next_sentence_head",
            )
            if next_sentence_prediction
            else None
        )

        self.masked_lm_accuracy = keras.metrics.Mean("masked_lm_accuracy")
        self.masked_lm_loss = keras.metrics.Mean("masked_lm_loss")
        if next_sentence_prediction:
            self.next_sentence_accuracy = keras.metrics.SparseCategoricalAccuracy(
                "next_sentence_accuracy"
            )
            self.next_sentence_loss = keras.metrics.Mean("next_sentence_loss")
            self.next_sentence_auc = NextSentenceAUC()

    def call(self, features, training=False):
        # Only [CLS] and the masked positions of the last layer are read: the encoder
        # computes its last block there alone.
        encoder_outputs = self.encoder.call_at_positions(
            {
                "input_word_ids": features["input_ids"],
                "input_mask": features["input_mask"],
                "input_type_ids": features["segment_ids"],
            },
            features["masked_lm_positions"],
            training=training,
        )
        masked_states = encoder_outputs["sequence_output"]  # [batch, predictions, hidden]
        if training and self.masked_lm_samples:
            outputs = sampled_masked_lm_scores(
                self.masked_lm_head,
                masked_states,
                self.encoder.word_embedding_matrix,
                features["masked_lm_ids"],
                self.masked_lm_samples,
                self._sampling_seed,
            )
        else:
            outputs = {
                "masked_lm_logits": self.masked_lm_head(  # [batch, predictions, vocab]
                    masked_states, self.encoder.word_embedding_matrix
                )
            }
        if self.next_sentence_head is not None:
            logits = self.next_sentence_head(encoder_outputs["pooled_output"])
            outputs["next_sentence_logits"] = ops.cast(logits, "float32")  # [batch, 2]
        return outputs

    def build_with_dummy_inputs(self) -> None:
        """Builds the heads' weights for any batch, sequence length and prediction count (the
        encoder is built already): what loading a checkpoint into the model needs first."""
        self.build({"masked_lm_positions": (None, None)})

    def build(self, features_shape):
        # The encoder is a functional model and already built; only the heads are new.
        batch, predictions = features_shape["masked_lm_positions"]
        self.masked_lm_head.build((batch, predictions, self.encoder.hidden_size))
        if self.next_sentence_head is not None:
            self.next_sentence_head.build((batch, self.encoder.hidden_size))

    # -- Keras training hooks: the targets live in the features (x). --------------------

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """This replica's pretraining loss (plus any `add_loss` terms), divided by the replica
        count as Keras divides its compiled losses: the
        replicas' gradients sum to the global batch's."""
        loss = pretraining_losses(x, y_pred)["loss"]
        if self.losses:
            loss += ops.sum(self.losses)
        return loss / tf.distribute.get_replica_context().num_replicas_in_sync

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        self.update_pretraining_metrics(x, y_pred)
        return self.get_metrics_result()

    def update_pretraining_metrics(self, features, outputs, losses=None):
        """Accumulates the pretraining metrics over a batch.

        Args:
            features: the batch's pretraining features (the targets).
            outputs: the model's outputs on them.
            losses: `pretraining_losses(features, outputs)` where the caller has it already:
                its cross-entropies are reused rather than computed again; None: computed here.
        """
        losses = losses or pretraining_losses(features, outputs)
        weights = features["masked_lm_weights"]
        # [batch, predictions]
        label_logits, best_logits = _label_and_best_logits(features, outputs)
        self.masked_lm_accuracy.update_state(label_logits >= best_logits, sample_weight=weights)
        self.masked_lm_loss.update_state(losses["masked_lm_cross_entropy"], sample_weight=weights)
        if self.next_sentence_prediction:
            labels, logits = features["next_sentence_labels"], outputs["next_sentence_logits"]
            self.next_sentence_accuracy.update_state(labels, logits)
            self.next_sentence_loss.update_state(losses["next_sentence_cross_entropy"])
            self.next_sentence_auc.update_state(labels, logits)

    @property
    def pretraining_metrics(self):
        metrics = [self.masked_lm_accuracy, self.masked_lm_loss]
        if self.next_sentence_prediction:
            metrics += [
                self.next_sentence_accuracy,
                self.next_sentence_loss,
                self.next_sentence_auc,
            ]
        return metrics

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "masked_lm_samples": self.masked_lm_samples,
            "next_sentence_prediction": self.next_sentence_prediction,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)


def _label_and_best_logits(features, outputs):
    """(the label's logit, the largest logit) of each prediction, `[batch, predictions]`: from the
    vocab's `masked_lm_logits`, or from the candidates of a sampled softmax (`sampled_masked_lm`).

    The accuracy is the mean of "the label's logit is the largest", weighted: one max-reduction
    over the logits, where an argmax or top-k makes more passes (Keras's argmax adds one for
    -0.0). A tie with the label counts as correct.
    """
    if "masked_lm_logits" not in outputs:
        return outputs["masked_lm_label_logits"], outputs["masked_lm_best_logits"]
    logits = outputs["masked_lm_logits"]  # [batch, predictions, vocab]
    ids = ops.cast(features["masked_lm_ids"], "int32")[..., None]  # [batch, predictions, 1]
    return ops.take_along_axis(logits, ids, axis=-1)[..., 0], ops.max(logits, axis=-1)
