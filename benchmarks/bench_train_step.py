"""Pretraining train-step throughput: bert_tf against Model Garden, in one process.

    python benchmarks/bench_train_step.py                      # small (b32) and base (b8), float32
    python benchmarks/bench_train_step.py --dtype=bfloat16
    python benchmarks/bench_train_step.py --configs=tiny --batch_sizes=32

Each step is a full optimizer step: forward, backward, global-norm clipping and
AdamW, at seq 128 with 20 predictions. Model Garden's peer is BertPretrainerV2 +
BertEncoder (tf_keras) with its own AdamWeightDecay, exact GELU like ours. Both
run with and without XLA; the peers alternate in rounds so that the machine's
drift hits both alike, and the best round counts. MFU is measured against the
float32 (or bfloat16) matmul peak measured at the start of the same run, for the
issue's FLOP count (every layer at every position: MFU) and for the FLOPs our step
executes (its last block computes only [CLS] and the masked positions: executed).
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks import model_garden_peer  # noqa: E402
from benchmarks.pretraining_batch import PREDICTIONS, SEQ, benchmark_options, random_batch  # noqa: E402
from bert_tf.bert_config import BertConfig  # noqa: E402

flags.DEFINE_list("configs", ["small", "base"], "configs/<name>/bert_config.json to run.")
flags.DEFINE_list("batch_sizes", ["32", "8"], "Batch size per config, in the same order.")
flags.DEFINE_enum("dtype", "float32", ["float32", "bfloat16"], "Compute precision of both peers.")
flags.DEFINE_integer("steps", 10, "Timed steps per round.")
flags.DEFINE_integer("rounds", 2, "Alternating rounds per peer.")
flags.DEFINE_bool("xla", True, "Also run both peers with jit_compile=True.")
FLAGS = flags.FLAGS


def matmul_peak(dtype: str) -> float:
    """Measured matmul FLOP/s of this machine for `dtype` (2048^3, best of 5)."""
    a = tf.random.normal([2048, 2048], dtype=tf.float32)
    a = tf.cast(a, dtype)
    step = tf.function(lambda x: tf.matmul(x, x))
    step(a).numpy()
    best = min(_timed(lambda: step(a).numpy()) for _ in range(5))
    return 2 * 2048**3 / best


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _layer_params(config: BertConfig) -> int:
    h = config.hidden_size
    return 4 * (h * h + h) + 2 * h * config.intermediate_size + config.intermediate_size + h + 4 * h


def training_flops_per_step(config: BertConfig, batch: int) -> float:
    """The issue's count: 6 x non-embedding params per token + 12*L*H*T attention per token
    + the MLM head, every layer at every position (Model Garden's step)."""
    h, layers = config.hidden_size, config.num_hidden_layers
    non_embedding = layers * _layer_params(config) + h * h + h  # + pooler
    per_token = 6 * non_embedding + 12 * layers * h * SEQ
    mlm = 6 * (h * h + h * config.vocab_size) * PREDICTIONS
    return batch * (SEQ * per_token + mlm)


def executed_flops_per_step(config: BertConfig, batch: int) -> float:
    """The count of what bert_tf's step computes: its last block runs everything but the key and
    value projections only at [CLS] and the masked positions (`BertEncoder.call_at_positions`)."""
    h = config.hidden_size
    skipped_rows = SEQ - (1 + PREDICTIONS)
    per_row = 6 * (_layer_params(config) - 2 * (h * h + h)) + 12 * h * SEQ
    return training_flops_per_step(config, batch) - batch * skipped_rows * per_row


def ours(config: BertConfig, batch, jit_compile: bool):
    """Returns a callable running n train steps of bert_tf's PretrainingRunner."""
    from bert_tf.pretraining.driver import build_model
    from bert_tf.pretraining.loops import PretrainingRunner
    from bert_tf.training import distribution

    distribution.set_precision(FLAGS.dtype)
    options = benchmark_options()
    strategy = tf.distribute.get_strategy()
    model, optimizer = build_model(config, options, strategy)
    runner = PretrainingRunner(
        strategy, model, optimizer, len(batch["input_ids"]), jit_compile=jit_compile
    )
    iterator = iter(tf.data.Dataset.from_tensors(batch).repeat())
    return lambda n: (runner.train(iterator, n), optimizer.iterations.numpy())


def model_garden(config: BertConfig, batch, jit_compile: bool):
    """Returns a callable running n train steps of Model Garden's BertPretrainerV2."""
    pretrainer, optimizer = model_garden_peer.build(config, 1e-4, FLAGS.dtype)
    step = model_garden_peer.train_step(pretrainer, optimizer, jit_compile)
    features = {name: tf.constant(value) for name, value in batch.items()}

    @tf.function
    def loop(n):
        for _ in tf.range(n):
            step(features)

    return lambda n: (loop(tf.constant(n)), optimizer.iterations.numpy())


def measure(peers: dict, batch_size: int) -> dict[str, float]:
    """Best sequences/s over alternating rounds, after a warm-up step each."""
    for run in peers.values():
        run(2)
    best = {name: 0.0 for name in peers}
    for _ in range(FLAGS.rounds):
        for name, run in peers.items():
            best[name] = max(
                best[name], FLAGS.steps * batch_size / _timed(lambda: run(FLAGS.steps))
            )
    return best


def main(argv):
    del argv
    peak = matmul_peak(FLAGS.dtype)
    print(
        f"machine: {os.cpu_count()} CPUs; {FLAGS.dtype} matmul peak {peak / 1e9:.0f} GFLOP/s; "
        f"TF_CPU_ALLOCATOR_USE_BFC={os.environ.get('TF_CPU_ALLOCATOR_USE_BFC')} (both peers)"
    )
    print(
        f"{'config':<8}{'batch':>6}{'xla':>5}{'Model Garden':>14}{'bert_tf':>10}"
        f"{'ratio':>7}{'MFU':>7}{'executed':>10}"
    )
    for name, batch_size in zip(FLAGS.configs, map(int, FLAGS.batch_sizes)):
        config = BertConfig.from_json_file(f"configs/{name}/bert_config.json")
        batch = random_batch(config, batch_size)
        for xla in [False, True] if FLAGS.xla else [False]:
            figures = measure(
                {"mg": model_garden(config, batch, xla), "ours": ours(config, batch, xla)},
                batch_size,
            )
            steps_per_second = figures["ours"] / batch_size
            mfu = steps_per_second * training_flops_per_step(config, batch_size) / peak
            executed = steps_per_second * executed_flops_per_step(config, batch_size) / peak
            print(
                f"{name:<8}{batch_size:>6}{'yes' if xla else 'no':>5}{figures['mg']:>11.2f} s/s"
                f"{figures['ours']:>7.2f} s/s{figures['ours'] / figures['mg']:>6.2f}x{mfu:>6.0%}"
                f"{executed:>9.0%}",
                flush=True,
            )


if __name__ == "__main__":
    app.run(main)
