"""`PretrainingRunner`: the distributed train and eval loops of BERT pretraining."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.models.pretraining_loss import pretraining_losses
from bert_tf.models.train_step import CLIP_NORM, apply_global_gradients


class PretrainingRunner:
    """Runs `num_steps` train steps per `train` call,
    in one `tf.function`, over a distributed iterator.

    This loop works under every strategy (Model Garden's orbit does the same), where
    `model.fit(steps_per_execution>1)` fails under MirroredStrategy. Each replica divides
    its loss by the *global* batch's denominators (total MLM weight, number of examples),
    so the summed gradients are those of the whole global batch whatever the replica count.

    The model and optimizer must be built under `strategy.scope()`.
    """

    def __init__(
        self,
        strategy: tf.distribute.Strategy,
        model: BertPretrainer,
        optimizer,
        global_batch_size: int,
        clip_norm: float | None = CLIP_NORM,
        jit_compile: bool = False,
    ):
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer
        self.global_batch_size = global_batch_size
        self.clip_norm = clip_norm
        # The steps have no Python control flow on tensors: without autograph's rewrite of every
        # function they call, the first call traces about a second sooner (as Keras's own steps).
        self._replica_train_step = tf.function(
            self._train_step, jit_compile=jit_compile, autograph=False
        )
        self._replica_eval_step = tf.function(
            self._eval_step, jit_compile=jit_compile, autograph=False
        )
        self._train_loop = tf.function(self._loop)
        self._eval_loop = tf.function(self._eval)

    # -- one replica ---------------------------------------------------------------------

    def _global_losses(self, features, outputs):
        context = tf.distribute.get_replica_context()
        weight_sum = context.all_reduce(
            tf.distribute.ReduceOp.SUM, tf.reduce_sum(features["masked_lm_weights"])
        )
        return pretraining_losses(
            features,
            outputs,
            masked_lm_weight_sum=weight_sum,
            num_examples=float(self.global_batch_size),
        )

    def _train_step(self, features):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.model(features, training=True)
            losses = self._global_losses(features, outputs)
            scaled_loss = self.optimizer.scale_loss(losses["loss"])
        grads = tape.gradient(scaled_loss, variables)
        apply_global_gradients(self.optimizer, grads, variables, self.clip_norm)
        self.model.update_pretraining_metrics(features, outputs, losses)

    def _eval_step(self, features):
        self.model.update_pretraining_metrics(features, self.model(features, training=False))

    # -- loops over a distributed iterator ----------------------------------------------

    def _loop(self, iterator, num_steps):
        for _ in tf.range(num_steps):
            self.strategy.run(self._replica_train_step, args=(next(iterator),))

    def _eval(self, distributed_dataset):
        for features in distributed_dataset:
            self.strategy.run(self._replica_eval_step, args=(features,))

    def train(self, iterator, num_steps: int) -> None:
        """Runs `num_steps` optimizer steps (one `tf.function` call)."""
        self._train_loop(iterator, tf.constant(num_steps, tf.int32))

    def evaluate(self, distributed_dataset) -> dict[str, float]:
        """The metrics over every batch of a finite distributed dataset."""
        self.reset_metrics()
        self._eval_loop(distributed_dataset)
        return self.metric_results()

    # -- metrics ---------------------------------------------------------------------------

    def metric_results(self) -> dict[str, float]:
        """The pretraining metrics and `loss` (their losses summed), as floats."""
        results = {m.name: float(m.result().numpy()) for m in self.model.pretraining_metrics}
        results["loss"] = results["masked_lm_loss"] + results.get("next_sentence_loss", 0.0)
        return results

    def reset_metrics(self) -> None:
        for metric in self.model.pretraining_metrics:
            metric.reset_state()
