"""Pretraining under MirroredStrategy and MultiWorkerMirroredStrategy, and resuming after SIGKILL.

Each check runs in fresh processes: logical devices and TF_CONFIG must be set up
before TensorFlow starts. This file is also the worker script of those processes.
"""

import dataclasses
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from worker_processes import finish, tf_configs, worker_env

REPO = pathlib.Path(__file__).resolve().parents[1]
SEQ, PREDICTIONS, BATCH, STEPS = 16, 4, 8, 4


def _worker(mode: str, workdir: pathlib.Path, *extra: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, mode, str(workdir), *extra],
        cwd=REPO,
        env=worker_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


# -- tests ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_mirrored_matches_one_device_and_evaluates_global_batches(tmp_path):
    (out,) = finish(_worker("mirrored", tmp_path))
    results = json.loads(out.strip().splitlines()[-1])
    one, mirrored = np.load(tmp_path / "one_device.npz"), np.load(tmp_path / "mirrored.npz")
    assert results["replicas"] == [1, 2]
    np.testing.assert_allclose(results["loss"][1], results["loss"][0], rtol=1e-5)
    # The AUC counts both replicas' pairs: it equals one device's over the same global batches.
    assert 0 < results["next_sentence_auc"][0] < 1
    np.testing.assert_allclose(
        results["next_sentence_auc"][1], results["next_sentence_auc"][0], atol=1e-6
    )
    assert one.files == mirrored.files
    for name in one.files:
        np.testing.assert_allclose(mirrored[name], one[name], atol=1e-5, err_msg=name)
    changed = sum(
        not np.allclose(one[name], np.load(tmp_path / "initial.npz")[name]) for name in one.files
    )
    assert changed > len(one.files) // 2  # the steps really moved the weights
    assert np.isfinite(results["sampled_loss"]) and results["sampled_changed"] > len(one.files) // 2
    assert (
        results["indivisible_batch_error"]
        == "`train_batch_size`=7 is not divisible by the 2 replicas"
    )
    assert results["indivisible_batch_left_output"] is False
    # BertPretrainer.fit, unclipped: each replica's loss is
    # scaled so that the gradients sum to the global batch's.
    fit_one, fit_mirrored = (
        np.load(tmp_path / "fit_one_device.npz"),
        np.load(tmp_path / "fit_mirrored.npz"),
    )
    for name in fit_one.files:
        np.testing.assert_allclose(fit_mirrored[name], fit_one[name], atol=1e-5, err_msg=name)
    assert (
        sum(
            not np.allclose(fit_one[name], np.load(tmp_path / "initial.npz")[name])
            for name in fit_one.files
        )
        > len(fit_one.files) // 2
    )
    # --max_eval_steps=3 global batches of --eval_batch_size=8
    # on 2 replicas, from records and from text.
    assert results["eval_examples"] == {"records": 24, "dynamic_masking": 24}


@pytest.mark.slow
def test_multi_worker_run_writes_only_the_chiefs_files_and_workers_stay_identical(tmp_path):
    from bert_test_utils import TINY, write_pretraining_records

    # One file for two workers: each reads it and keeps its share of the records.
    records = write_pretraining_records(
        tmp_path / "train.tfrecord", 64, SEQ, PREDICTIONS, TINY["vocab_size"]
    )
    workers = [_worker("multi_worker", tmp_path, records, tf_config) for tf_config in tf_configs(2)]
    results = [json.loads(out.strip().splitlines()[-1]) for out in finish(*workers)]
    assert results[0] == results[1] and results[0]["run"]["global_step"] == STEPS
    # Each worker was given its own --output_dir: the chief's holds the run, the other's nothing.
    assert sorted(p.name for p in (tmp_path / "out0").iterdir()) == [
        "bert_config.json",
        "checkpoint",
        f"ckpt-{STEPS // 2}.data-00000-of-00001",
        f"ckpt-{STEPS // 2}.index",
        f"ckpt-{STEPS}.data-00000-of-00001",
        f"ckpt-{STEPS}.index",
        "eval",
        "eval_results.txt",
        "train",
    ]
    assert not (tmp_path / "out1").exists()
    # Then the runner's steps on a file each: the workers' weights stay the same, bit for bit.
    assert [r["replicas"] for r in results] == [2, 2] and results[0]["step"] == STEPS
    first, second = np.load(tmp_path / "worker_0.npz"), np.load(tmp_path / "worker_1.npz")
    for name in first.files:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)


def _one_worker_tf_config() -> str:
    """A TF_CONFIG of one worker on a free 127.0.0.1 port: a multi-worker cluster of one."""
    (tf_config,) = tf_configs(1)
    return tf_config


def test_multi_worker_mirrored_from_the_command_line(tmp_path):
    from bert_test_utils import TINY, write_pretraining_records, write_tiny_config

    records = write_pretraining_records(
        tmp_path / "train.tfrecord", 32, SEQ, PREDICTIONS, TINY["vocab_size"]
    )
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "run_pretraining.py"),
            "--distribution_strategy=multi_worker_mirrored",
            f"--input_file={records}",
            f"--bert_config_file={write_tiny_config(tmp_path)}",
            f"--output_dir={out}",
            "--do_train",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}",
            "--train_batch_size=8",
            "--num_train_steps=2",
            "--num_warmup_steps=0",
        ],
        cwd=REPO,
        env=dict(worker_env(), TF_CONFIG=_one_worker_tf_config()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Strategy CollectiveAllReduceStrategy with 1 replicas" in result.stderr
    assert (out / "ckpt-2.index").exists()


def test_a_strategy_the_runtime_refuses_is_a_distribution_error(tmp_path):
    (out,) = finish(_worker("runtime_started", tmp_path, _one_worker_tf_config()))
    assert out.strip().splitlines()[-1] == (
        "`distribution_strategy`=multi_worker_mirrored: "
        "Collective ops must be configured at program startup"
    )


def _train_events(out_dir: pathlib.Path) -> dict[str, dict[int, float]]:
    import tensorflow as tf

    scalars = {}
    for path in sorted((out_dir / "train").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                scalars.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
    return scalars


@pytest.mark.slow
def test_resume_after_sigkill(tmp_path):
    import tensorflow as tf

    from bert_test_utils import TINY, write_pretraining_records, write_tiny_config
    from bert_tf.training.optimization import warmup_linear_decay

    config = write_tiny_config(tmp_path)
    records = write_pretraining_records(
        tmp_path / "train.tfrecord", 64, SEQ, PREDICTIONS, TINY["vocab_size"]
    )
    out = tmp_path / "out"
    flags = [
        f"--input_file={records}",
        f"--bert_config_file={config}",
        f"--output_dir={out}",
        "--do_train",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--train_batch_size=8",
        "--num_train_steps=200",
        "--num_warmup_steps=20",
        "--learning_rate=2e-3",
        "--save_checkpoints_steps=20",
        "--iterations_per_loop=10",
        "--log_every=10",
    ]
    command = [sys.executable, str(REPO / "run_pretraining.py"), *flags]

    first_stderr = tmp_path / "first_run.stderr"
    with open(first_stderr, "w") as stderr:
        first = subprocess.Popen(
            command, cwd=REPO, env=worker_env(), stdout=subprocess.DEVNULL, stderr=stderr
        )
        deadline = time.monotonic() + 240
        # The `checkpoint` state file is written after a
        # checkpoint's data: it commits the checkpoint.
        while (
            not (out / "checkpoint").exists()
            and time.monotonic() < deadline
            and first.poll() is None
        ):
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
    latest = tf.train.latest_checkpoint(str(out))
    assert latest, (
        f"the first run wrote no checkpoint; its stderr ends:\n{first_stderr.read_text()[-3000:]}"
    )
    killed_at = int(re.search(r"ckpt-(\d+)$", latest).group(1))
    assert killed_at < 200, "the first run finished before it could be killed"

    second = subprocess.run(
        command, cwd=REPO, env=worker_env(), capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert re.search(rf"Resumed from .*ckpt-{killed_at}\b", second.stderr)
    # Not a terminal: a log line a window, not Keras's bar redrawn with backspaces.
    assert re.search(r"Step 200 of 200: masked_lm_accuracy = \S+, .*, loss = ", second.stdout)
    assert "\b" not in second.stdout + second.stderr

    latest = tf.train.latest_checkpoint(str(out))
    assert latest.endswith("ckpt-200")
    (iterations,) = [
        tf.train.load_variable(latest, name)
        for name, _ in tf.train.list_variables(latest)
        if name.startswith("optimizer/") and "iteration" in name
    ]
    assert int(iterations) == 200

    scalars = _train_events(out)
    schedule = warmup_linear_decay(2e-3, 200, 20)
    resumed_steps = [s for s in sorted(scalars["loss"]) if s > killed_at]
    assert resumed_steps[0] == killed_at + 10 and resumed_steps[-1] == 200
    for step in resumed_steps:
        # Logged after `step` updates: the rate of the next update.
        np.testing.assert_allclose(scalars["learning_rate"][step], float(schedule(step)), rtol=1e-5)
    initial_loss = scalars["loss"][min(scalars["loss"])]
    assert scalars["loss"][resumed_steps[0]] < initial_loss - 0.5, scalars["loss"]


# -- worker processes ---------------------------------------------------------------------------


def _weights(model) -> dict:
    # Keyed by position: the order of `model.weights` is the same in every build.
    return {f"{i:03d}": v.numpy() for i, v in enumerate(model.weights)}


def _options(workdir, files, batch=BATCH):
    from bert_test_utils import write_tiny_config
    from bert_tf.pretraining.driver import PretrainingOptions

    return PretrainingOptions(
        bert_config_file=write_tiny_config(workdir),
        input_file=",".join(files),
        output_dir=str(workdir / "out"),
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        train_batch_size=batch,
        learning_rate=1e-2,
        num_train_steps=100,
        num_warmup_steps=0,
        verbose=False,
    )


def _train(strategy, opts, initial=None, clip_norm=0.01):
    """STEPS steps on the files in order; returns (metrics over them, weights, optimizer steps)."""
    from bert_tf.bert_config import BertConfig
    from bert_tf.data.pretraining_dataset import pretraining_dataset
    from bert_tf.pretraining.driver import build_model
    from bert_tf.pretraining.loops import PretrainingRunner

    files = opts.input_file.split(",")
    model, optimizer = build_model(BertConfig.from_json_file(opts.bert_config_file), opts, strategy)
    if initial is not None:
        for i, variable in enumerate(model.weights):
            variable.assign(initial[f"{i:03d}"])
    dataset = strategy.distribute_datasets_from_function(
        lambda context: pretraining_dataset(
            files, opts.train_batch_size, SEQ, PREDICTIONS, is_training=False, input_context=context
        ).repeat()
    )
    # A tiny clip norm makes every step clip, so clipping the global gradient is what is compared.
    runner = PretrainingRunner(
        strategy, model, optimizer, opts.train_batch_size, clip_norm=clip_norm
    )
    runner.train(iter(dataset), STEPS)
    return runner.metric_results(), _weights(model), int(optimizer.iterations.numpy())


def _fit(strategy, opts, initial):
    """Two steps of `BertPretrainer.fit` (SGD, no clipping) on the first records; the weights."""
    import keras

    from bert_tf.data.pretraining_dataset import pretraining_dataset
    from bert_tf.models import BertEncoder, BertPretrainer

    with strategy.scope():
        model = BertPretrainer(BertEncoder.from_config_file(opts.bert_config_file))
        model.build_with_dummy_inputs()
        for i, variable in enumerate(model.weights):
            variable.assign(initial[f"{i:03d}"])
        model.clip_norm = None
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1))
    dataset = pretraining_dataset(
        opts.input_file.split(","), opts.train_batch_size, SEQ, PREDICTIONS, is_training=False
    ).take(2)
    model.fit(dataset, verbose=0)
    return _weights(model)


def _mirrored_worker(workdir: pathlib.Path):
    import tensorflow as tf

    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from bert_test_utils import TINY, write_pretraining_records
    from bert_tf.pretraining.driver import run_pretraining

    files = [
        write_pretraining_records(
            workdir / "train.tfrecord", 64, SEQ, PREDICTIONS, TINY["vocab_size"]
        )
    ]
    opts = _options(workdir, files)
    one_device = tf.distribute.OneDeviceStrategy("/cpu:0")
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    from bert_tf.bert_config import BertConfig
    from bert_tf.pretraining.driver import build_model

    initial = _weights(
        build_model(BertConfig.from_json_file(opts.bert_config_file), opts, one_device)[0]
    )
    np.savez(workdir / "initial.npz", **initial)
    losses, aucs = [], []
    for name, strategy in (("one_device", one_device), ("mirrored", mirrored)):
        metrics, weights, _ = _train(strategy, opts, initial)
        np.savez(workdir / f"{name}.npz", **weights)
        losses.append(metrics["loss"])
        aucs.append(metrics["next_sentence_auc"])
        np.savez(workdir / f"fit_{name}.npz", **_fit(strategy, opts, initial))
    # A sampled masked-LM softmax draws its candidates in each
    # replica (no parity: each draws for its own labels).
    sampled_metrics, sampled, _ = _train(
        mirrored, dataclasses.replace(opts, masked_lm_samples=16), initial
    )
    indivisible = dataclasses.replace(
        _options(workdir, files, batch=7), output_dir=str(workdir / "indivisible")
    )
    try:
        run_pretraining(indivisible, mirrored)
        error = None
    except ValueError as e:
        error = str(e)
    print(
        json.dumps(
            {
                "loss": losses,
                "next_sentence_auc": aucs,
                "replicas": [1, mirrored.num_replicas_in_sync],
                "sampled_loss": sampled_metrics["loss"],
                "sampled_changed": sum(
                    not np.allclose(initial[name], sampled[name]) for name in initial
                ),
                "indivisible_batch_error": error,
                "indivisible_batch_left_output": os.path.exists(indivisible.output_dir),
                "eval_examples": _eval_examples(workdir, files[0], mirrored),
            }
        )
    )


def _eval_examples(workdir: pathlib.Path, records: str, strategy) -> dict[str, int]:
    """The examples the eval input holds under `strategy`, from `records` and from text."""
    from bert_test_utils import write_word_vocab
    from bert_tf.pretraining.driver import _distributed_dataset

    sentences = [f"sentence {i} of document {i // 5} has some words ." for i in range(200)]
    text = "".join(s + ("\n\n" if i % 5 == 4 else "\n") for i, s in enumerate(sentences))
    (workdir / "corpus.txt").write_text(text, encoding="utf-8")
    opts = dataclasses.replace(
        _options(workdir, [records]),
        eval_batch_size=8,
        max_eval_steps=3,
        vocab_file=write_word_vocab(workdir / "vocab.txt", sentences),
    )
    inputs = {
        "records": (opts, [records]),
        "dynamic_masking": (
            dataclasses.replace(opts, dynamic_masking=True),
            [str(workdir / "corpus.txt")],
        ),
    }
    examples = {}
    for name, (options, files) in inputs.items():
        dataset = _distributed_dataset(
            strategy, files, 8, options, is_training=False, vocab_size=None
        )
        examples[name] = sum(
            int(labels.shape[0])
            for batch in dataset
            for labels in strategy.experimental_local_results(batch["next_sentence_labels"])
        )
    return examples


def _multi_worker(workdir: pathlib.Path, records: str, tf_config: str):
    """Under MultiWorkerMirroredStrategy: run_pretraining into --output_dir out<task index>, then
    `_train` on two files, a shard each, saving the weights; prints both results."""
    os.environ["TF_CONFIG"] = tf_config
    from bert_test_utils import TINY, write_pretraining_records
    from bert_tf.pretraining.driver import run_pretraining
    from bert_tf.training import distribution

    strategy = distribution.create_strategy("multi_worker_mirrored")
    index = json.loads(tf_config)["task"]["index"]
    (workdir / f"config{index}").mkdir()
    opts = dataclasses.replace(
        _options(workdir / f"config{index}", [records]),
        output_dir=str(workdir / f"out{index}"),
        do_eval=True,
        max_eval_steps=2,
        num_train_steps=STEPS,
        save_checkpoints_steps=STEPS // 2,
        iterations_per_loop=STEPS // 2,
    )
    run = run_pretraining(opts, strategy)
    files = [
        write_pretraining_records(
            workdir / f"w{index}_part{i}.tfrecord", 32, SEQ, PREDICTIONS, TINY["vocab_size"], seed=i
        )
        for i in range(2)
    ]
    _, weights, step = _train(strategy, _options(workdir / f"config{index}", files))
    np.savez(workdir / f"worker_{index}.npz", **weights)
    print(json.dumps({"run": run, "replicas": strategy.num_replicas_in_sync, "step": step}))


def _runtime_started(tf_config: str):
    """Starts TensorFlow's runtime, then asks for MultiWorkerMirroredStrategy; prints the error."""
    os.environ["TF_CONFIG"] = tf_config
    import tensorflow as tf

    from bert_tf.training import distribution

    tf.constant(0)  # the runtime starts: collective ops can no longer be configured
    try:
        distribution.create_strategy("multi_worker_mirrored")
    except distribution.DistributionError as e:
        print(e)


if __name__ == "__main__":
    from bert_tf.script import import_out_of_the_collectors_way

    import_out_of_the_collectors_way("tensorflow")
    mode, workdir = sys.argv[1], pathlib.Path(sys.argv[2])
    if mode == "mirrored":
        _mirrored_worker(workdir)
    elif mode == "multi_worker":
        _multi_worker(workdir, sys.argv[3], sys.argv[4])
    elif mode == "runtime_started":
        _runtime_started(sys.argv[3])
