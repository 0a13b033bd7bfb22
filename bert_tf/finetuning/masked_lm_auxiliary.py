"""`MaskedLMAuxiliary`: a task model that also keeps doing masked LM while it fine-tunes."""

from __future__ import annotations

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.models.bert_encoder import ENCODER_INPUTS
from bert_tf.models.bert_task_model import BertTaskModel
from bert_tf.models.pretraining_loss import cross_entropy
from bert_tf.models.train_step import GlobalClippingTrainStep
from bert_tf.tokenization import Vocab


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMAuxiliary(GlobalClippingTrainStep, keras.Model):
    """Wraps a task model; in training, its loss adds
    `weight * masked-LM loss` on the task's own inputs.

    The task's outputs are unchanged. In training, `compute_loss` takes a copy of
    each input in which every real token but `[CLS]` and `[SEP]` is chosen on its
    own, with probability `masked_lm_prob`, and at most `max_predictions` of the
    chosen (those with the smallest draws) are kept per sequence. So
    `masked_lm_prob` is the share only on average, and a short sequence can get no
    prediction at all (pretraining data instead takes `max(1, round(n *
    masked_lm_prob))` of n tokens, up to its cap). Each kept token is replaced
    80/10/10 by `[MASK]`, a random token or itself, as in pretraining; the encoder
    reads the copy, and a `MaskedLMHead` tied to the word embeddings predicts the
    originals. Their weighted-mean cross-entropy, times `weight`, joins the
    compiled loss, so `model.fit` minimises task loss + weight * masked-LM loss.
    This keeps the encoder close to its pretraining objective (against
    catastrophic forgetting).

    On N replicas the steps are those of one device at the same global batch:
    each replica draws the random numbers of the whole global batch and keeps its
    own rows, and the mean is over the global batch's predictions. (Not an
    `add_loss` term: the replicas' threads share the model's `losses` list, so
    past that all-reduce one replica's term would join another's.)

    The head is `masked_lm_head`, so `load_checkpoint` fills it from a
    pretraining checkpoint's `cls/predictions/...`.

    `vocab` is the task's `Vocab`, or what masking needs of it (as `get_config`
    stores it): `{"size": len(vocab), "mask_id": ..., "cls_id": ..., "sep_id": ...,
    "pad_id": ...}`.
    """

    def __init__(
        self,
        task_model: BertTaskModel,
        vocab: Vocab | dict[str, int],
        weight: float,
        max_predictions: int = 20,
        masked_lm_prob: float = 0.15,
        seed: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.task_model = task_model
        self.encoder = task_model.encoder
        self.vocab = dict(vocab) if isinstance(vocab, dict) else _masking_ids(vocab)
        self.weight = weight
        self.max_predictions = max_predictions
        self.masked_lm_prob = masked_lm_prob
        self.seed = seed
        self.masked_lm_head = MaskedLMHead.for_encoder(self.encoder)
        self.seed_generator = keras.random.SeedGenerator(seed)

    def build_with_dummy_inputs(self) -> None:
        self.task_model.build_with_dummy_inputs()
        self.masked_lm_head.build((None, None, self.encoder.hidden_size))
        self.built = True

    def get_build_config(self):
        return {"dummy_inputs": True}

    def build_from_config(self, config):
        """Builds a model read from a `.keras` file as `build_with_dummy_inputs` builds it."""
        self.build_with_dummy_inputs()

    def call(self, inputs, training=False):
        return self.task_model(inputs, training=training)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras's loss (divided by the replica count) plus, in training, `weight *` this
        replica's share of the global batch's masked-LM loss."""
        loss = super().compute_loss(x, y, y_pred, sample_weight, training=training)
        if training:
            loss += self.weight * self._masked_lm_loss(x)
        return loss

    def _masked_lm_loss(self, inputs):
        """This replica's weighted cross-entropy over the global batch's count of predictions."""
        seq = ops.shape(inputs["input_word_ids"])[-1]
        flat = {name: ops.reshape(inputs[name], (-1, seq)) for name in ENCODER_INPUTS}  # [n, seq]
        ids = flat["input_word_ids"]
        selectable = ops.cast(flat["input_mask"], "bool")
        for token in (self.vocab["cls_id"], self.vocab["sep_id"], self.vocab["pad_id"]):
            selectable = ops.logical_and(selectable, ops.not_equal(ids, token))
        # The max_predictions selectable positions with the smallest draws; those under
        # masked_lm_prob are predicted.
        draws = ops.where(selectable, self._replica_rows(keras.random.uniform, ops.shape(ids)), 2.0)
        # [n, predictions]
        neg_draws, positions = ops.top_k(-draws, k=min(self.max_predictions, seq))
        weights = ops.cast(-neg_draws < self.masked_lm_prob, "float32")
        targets = ops.take_along_axis(ids, positions, axis=1)

        choice = self._replica_rows(keras.random.uniform, ops.shape(positions))
        random_ids = self._replica_rows(
            keras.random.randint, ops.shape(positions), 0, self.vocab["size"]
        )
        replacement = ops.where(
            choice < 0.8, self.vocab["mask_id"], ops.where(choice < 0.9, random_ids, targets)
        )
        hits = ops.one_hot(positions, seq) * weights[..., None]  # [n, predictions, seq]
        replaced = ops.sum(hits, axis=1) > 0
        new_values = ops.cast(
            ops.sum(hits * ops.cast(replacement, "float32")[..., None], axis=1), "int32"
        )
        flat["input_word_ids"] = ops.where(replaced, new_values, ids)

        masked = self.encoder.call_at_positions(flat, positions, training=True)["sequence_output"]
        logits = self.masked_lm_head(masked, self.encoder.word_embedding_matrix)
        per_prediction = cross_entropy(targets, logits)  # [n, predictions]
        count = tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.SUM, ops.sum(weights)
        )
        return ops.divide_no_nan(ops.sum(weights * per_prediction), count)

    def _replica_rows(self, sample, shape, *args):
        """This replica's rows `[shape]` of `sample` drawn
        for the whole global batch, as one device draws it.

        Each replica steps its own copy of the seed state alike, so all draw the same numbers
        (and a replica's rows are its share of the global batch).
        """
        context = tf.distribute.get_replica_context()
        rows = shape[0]
        draws = sample(
            (rows * context.num_replicas_in_sync, *shape[1:]), *args, seed=self.seed_generator
        )
        start = context.replica_id_in_sync_group * rows
        return draws[start : start + rows]

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "task_model": keras.saving.serialize_keras_object(self.task_model),
            "vocab": self.vocab,
            "weight": self.weight,
            "max_predictions": self.max_predictions,
            "masked_lm_prob": self.masked_lm_prob,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(
            config, task_model=keras.saving.deserialize_keras_object(config["task_model"])
        )
        return cls(**config)


def _masking_ids(vocab: Vocab) -> dict[str, int]:
    """What `MaskedLMAuxiliary` needs of `vocab`: its size and special ids."""
    return {
        "size": len(vocab),
        "mask_id": vocab.mask_id,
        "cls_id": vocab.cls_id,
        "sep_id": vocab.sep_id,
        "pad_id": vocab.pad_id,
    }
