"""The embedded default's pretraining job: bert_tf against Model Garden, in one process.

    # the demo's last phase, 800 steps (~11 minutes; 7 with --nofull_vocab)
    python benchmarks/bench_tiny_job.py
    python benchmarks/bench_tiny_job.py --steps=100    # a quick look
    python benchmarks/bench_tiny_job.py --random_seed=7 --nofull_vocab   # another draw, two peers

Both peers train the tiny config from scratch on the demo's 128-token records (the
Wikipedia sample, every tenth article held out) with the schedule, batch and XLA
setting of the demo's last phase (the ones before it, on 32- and 64-token sequences,
have as many tokens and predictions per batch), reading
the records through the same tf.data pipeline: the whole job's step, input
included, not a step on one fixed batch (that is `bench_train_step.py`). Then
both are scored by the same code on the held-out articles, next to the majority
baselines. Model Garden's peer is `model_garden_peer` (BertPretrainerV2 +
BertEncoder with its own AdamWeightDecay); ours is the demo's `PretrainingRunner`, run
twice: with the demo's sampled masked-LM softmax and with the whole vocab's.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks import model_garden_peer  # noqa: E402
from bert_tf.bert_config import BertConfig  # noqa: E402
from bert_tf.data import pretraining_dataset  # noqa: E402
from bert_tf.metrics.next_sentence_auc import NextSentenceAUC  # noqa: E402
from bert_tf.pretraining import demo  # noqa: E402
from bert_tf.pretraining.driver import PretrainingOptions, build_model  # noqa: E402
from bert_tf.pretraining.loops import PretrainingRunner  # noqa: E402

flags.DEFINE_integer("steps", demo.DEMO_SETTINGS["num_train_steps"], "Training steps of each peer.")
flags.DEFINE_integer(
    "random_seed",
    12345,
    "Seeds the records, their order and each peer's initialisation (the demo's --random_seed).",
)
flags.DEFINE_bool(
    "full_vocab", True, "Also train bert_tf with the whole vocab's masked-LM softmax."
)
flags.DEFINE_string(
    "work_dir",
    None,
    "Where the records go and stay (default: a temporary directory, removed at the end).",
)
FLAGS = flags.FLAGS


def train_ours(config: BertConfig, options: PretrainingOptions, features: tf.data.Dataset):
    """Trains bert_tf's pretrainer; returns (seconds, a function from features to both logits)."""
    strategy = tf.distribute.get_strategy()
    model, optimizer = build_model(config, options, strategy)
    runner = PretrainingRunner(
        strategy, model, optimizer, options.train_batch_size, jit_compile=options.jit_compile
    )
    iterator = iter(features)
    runner.train(iterator, 1)  # compiles
    start = time.perf_counter()
    runner.train(iterator, options.num_train_steps - 1)
    seconds = time.perf_counter() - start

    def predict(batch):
        outputs = model(batch)
        return outputs["masked_lm_logits"], outputs["next_sentence_logits"]

    return seconds, predict


def train_model_garden(config: BertConfig, options: PretrainingOptions, features: tf.data.Dataset):
    """Trains Model Garden's pretrainer; returns (seconds, a function: features -> both logits)."""
    schedule = model_garden_peer.warmup_linear_decay(
        options.learning_rate, options.num_train_steps, options.num_warmup_steps
    )
    keras.utils.set_random_seed(options.random_seed)  # as build_model seeds ours
    pretrainer, optimizer = model_garden_peer.build(config, schedule)
    step = model_garden_peer.train_step(pretrainer, optimizer, options.jit_compile)

    @tf.function
    def loop(iterator, n):
        for _ in tf.range(n):
            step(next(iterator))

    iterator = iter(features)
    loop(iterator, tf.constant(1))  # compiles
    start = time.perf_counter()
    loop(iterator, tf.constant(options.num_train_steps - 1))
    seconds = time.perf_counter() - start
    return seconds, lambda batch: model_garden_peer.logits(pretrainer, batch)


def heldout_accuracy(predict, records: tf.data.Dataset) -> dict[str, float]:
    """Masked-LM and next-sentence accuracy, and the next-sentence AUC, of `predict` over the
    held-out batches."""
    mlm = tf.keras.metrics.SparseCategoricalAccuracy()
    nsp = tf.keras.metrics.SparseCategoricalAccuracy()
    nsp_auc = NextSentenceAUC()
    predict = tf.function(predict)
    for batch in records:
        mlm_logits, nsp_logits = predict(batch)
        mlm.update_state(
            batch["masked_lm_ids"], mlm_logits, sample_weight=batch["masked_lm_weights"]
        )
        nsp.update_state(batch["next_sentence_labels"], nsp_logits)
        nsp_auc.update_state(batch["next_sentence_labels"], nsp_logits)
    return {
        "masked_lm_accuracy": float(mlm.result()),
        "next_sentence_accuracy": float(nsp.result()),
        "next_sentence_auc": float(nsp_auc.result()),
    }


def main(argv):
    del argv
    if FLAGS.work_dir:
        compare(FLAGS.work_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_tiny_job_") as work_dir:  # 28 MB of records
            compare(work_dir)


def compare(work_dir: str) -> None:
    """Writes the demo's records in `work_dir`, trains and scores both peers, prints the table."""
    options = PretrainingOptions(
        input_file="",
        **{
            **demo.DEMO_SETTINGS,
            "output_dir": work_dir,
            "num_train_steps": FLAGS.steps,
            "random_seed": FLAGS.random_seed,
        },
    )
    options, _, _, _ = demo.prepare_data(options)
    config = BertConfig.from_json_file(options.bert_config_file)

    def dataset(files, is_training):
        return pretraining_dataset.pretraining_dataset(
            files,
            options.train_batch_size,
            options.max_seq_length,
            options.max_predictions_per_seq,
            is_training=is_training,
            seed=options.random_seed,
        )

    train, heldout = dataset([options.input_file], True), dataset([options.eval_file], False)
    peers = [("Model Garden", train_model_garden, options), ("bert_tf", train_ours, options)]
    if FLAGS.full_vocab:
        peers.append(
            ("bert_tf, full", train_ours, dataclasses.replace(options, masked_lm_samples=0))
        )
    results = {}
    for name, train_peer, peer_options in peers:
        seconds, predict = train_peer(config, peer_options, train)
        results[name] = {
            "seconds_per_step": seconds / (options.num_train_steps - 1),
            **heldout_accuracy(predict, heldout),
        }
        print(f"{name}: {results[name]}", flush=True)

    baseline = demo.majority_baselines(heldout)
    print(
        f"\nmachine: {os.cpu_count()} CPUs; tiny config, batch {options.train_batch_size}, "
        f"{options.num_train_steps} steps, learning rate {options.learning_rate}, "
        f"XLA {options.jit_compile}, seed {options.random_seed}, "
        f"TF_CPU_ALLOCATOR_USE_BFC={os.environ.get('TF_CPU_ALLOCATOR_USE_BFC')}; "
        f"bert_tf's masked-LM softmax over the labels and {options.masked_lm_samples} sampled ids, "
        f"'bert_tf, full' over the whole vocab"
    )
    print(f"{'':<14}{'s/step':>8}{'held-out MLM':>14}{'held-out NSP':>14}{'NSP AUC':>9}")
    for name, figures in results.items():
        print(
            f"{name:<14}{figures['seconds_per_step']:>8.3f}{figures['masked_lm_accuracy']:>14.3f}"
            f"{figures['next_sentence_accuracy']:>14.3f}{figures['next_sentence_auc']:>9.3f}"
        )
    print(
        f"{'majority':<14}{'':>8}{baseline['masked_lm_accuracy']:>14.3f}{baseline['next_sentence_accuracy']:>14.3f}"
        f"{0.5:>9.3f}"
    )
    for name in [name for name in results if name != "Model Garden"]:
        ratio = results["Model Garden"]["seconds_per_step"] / results[name]["seconds_per_step"]
        print(f"{name} is {ratio:.2f}x Model Garden's speed per step")


if __name__ == "__main__":
    app.run(main)
