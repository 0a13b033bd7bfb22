"""Pretraining step time on two replicas: one gradient all-reduce a step against two, one process.

    python benchmarks/bench_allreduce.py                        # small config, global batch 4
    python benchmarks/bench_allreduce.py --config=tiny --batch_size=32

Both peers run bert_tf's PretrainingRunner under MirroredStrategy on two logical CPU
devices, from the same weights, on the same batch. `after` is bert_tf's step: the
replicas' gradients are summed once, clipped, and applied as they are. `before` is
the step bert_tf used to take, reproduced here: the same sum and clip, then each
replica's share (the sum divided by the replica count) given to Keras's
`optimizer.apply`, which all-reduces it a second time. The peers alternate in rounds
so that the machine's drift hits both alike, and the best round of each counts.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks.pretraining_batch import SEQ, benchmark_options, random_batch  # noqa: E402
from bert_tf.bert_config import BertConfig  # noqa: E402
from bert_tf.pretraining.loops import PretrainingRunner  # noqa: E402

flags.DEFINE_string("config", "small", "configs/<name>/bert_config.json to run.")
flags.DEFINE_integer("batch_size", 4, "Global batch size (two replicas).")
flags.DEFINE_integer("steps", 5, "Timed steps per round.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds per peer.")
FLAGS = flags.FLAGS


class TwoAllReducesRunner(PretrainingRunner):
    """The peer: the former update, whose optimizer all-reduces the summed gradients again."""

    def _train_step(self, features):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            outputs = self.model(features, training=True)
            losses = self._global_losses(features, outputs)
            scaled_loss = self.optimizer.scale_loss(losses["loss"])
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync
        pairs = [
            (g, v)
            for g, v in zip(tape.gradient(scaled_loss, variables), variables)
            if g is not None
        ]
        grads = context.all_reduce(
            tf.distribute.ReduceOp.SUM, [tf.convert_to_tensor(g) for g, _ in pairs]
        )
        norm = tf.linalg.global_norm(grads)
        factor = self.clip_norm / tf.maximum(norm, self.clip_norm)
        self.optimizer.apply([g * factor / replicas for g in grads], [v for _, v in pairs])
        self.model.update_pretraining_metrics(features, outputs, losses)


def peer(runner_class, strategy, config: BertConfig, batch: dict, initial):
    """A callable running n train steps of `runner_class` from weights `initial`; and the model."""
    from bert_tf.pretraining.driver import build_model

    options = benchmark_options()
    model, optimizer = build_model(config, options, strategy)
    if initial is not None:
        for variable, value in zip(model.weights, initial):
            variable.assign(value)
    runner = runner_class(strategy, model, optimizer, FLAGS.batch_size)
    iterator = iter(
        strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensors(batch).repeat())
    )
    return (lambda n: (runner.train(iterator, n), optimizer.iterations.numpy())), model


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv):
    del argv
    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = BertConfig.from_json_file(f"configs/{FLAGS.config}/bert_config.json")
    batch = random_batch(config, FLAGS.batch_size)
    after, model = peer(PretrainingRunner, strategy, config, batch, None)
    before, _ = peer(
        TwoAllReducesRunner, strategy, config, batch, [w.numpy() for w in model.weights]
    )
    peers = {"before": before, "after": after}
    for run in peers.values():
        run(2)  # trace and warm up
    best = {name: float("inf") for name in peers}
    for _ in range(FLAGS.rounds):
        for name, run in peers.items():
            best[name] = min(best[name], _timed(lambda: run(FLAGS.steps)) / FLAGS.steps)
    parameters = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    print(
        f"machine: {os.cpu_count()} CPUs, 2 logical CPU devices; config {FLAGS.config} "
        f"({parameters / 1e6:.1f}M parameters, {parameters * 4 / 1e6:.0f} MB of float32 "
        f"gradients), global batch {FLAGS.batch_size}, seq {SEQ}"
    )
    print(
        f"step time, best of {FLAGS.rounds} rounds of {FLAGS.steps} steps: before (two "
        f"all-reduces) {best['before'] * 1e3:.0f} ms, after (one) {best['after'] * 1e3:.0f} ms, "
        f"before/after {best['before'] / best['after']:.2f}x"
    )


if __name__ == "__main__":
    app.run(main)
