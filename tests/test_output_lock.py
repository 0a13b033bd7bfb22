"""One writer per output directory: a second run is refused in one line naming the first, a killed
run's lock never blocks its resume, on an object store a record checked before each save stands in
for the lock, and no run writes into a directory of another kind of run."""

import dataclasses
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time
import uuid

import keras
import pytest
import tensorflow as tf

from bert_test_utils import REPO, assert_fails_with_line, run_script, tiny_encoder
from bert_tf import io_utils, output_lock
from bert_tf.finetuning import run_finetuning
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.finetuning.training_backup import TrainingBackup
from bert_tf.models import BertClassifier, BertPretrainer
from bert_tf.output_kinds import OutputDirOfAnotherKind
from bert_tf.output_lock import OutputDirInUse, OutputDirTakenOver
from bert_tf.pretraining import checkpoints
from bert_tf.pretraining.driver import run_pretraining
from bert_tf.tokenization import BertTokenizer
from test_finetuning_driver import KeywordTask
from test_finetuning_driver import _options as finetuning_options
from test_pretraining_run import options as pretraining_options

HOST = socket.gethostname()


def utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def record(directory) -> dict:
    with tf.io.gfile.GFile(os.path.join(directory, ".bert_tf.lock")) as f:
        return json.loads(f.read())


def in_use(flag: str, directory, pid: int, host: str = HOST, lapses: str = "") -> str:
    """The refusal of a run that finds `directory` held by `pid` (whose record says since when)."""
    return (
        f"`{flag}`={directory} is in use by another run: pid {pid} on {host} since "
        f"{utc(record(directory)['started'])}{lapses}; "
        f"wait for it to end, or choose another `{flag}`"
    )


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


def test_a_second_claim_is_refused_naming_the_holder_and_the_lock_goes_with_the_run(tmp_path):
    directory = str(tmp_path / "out")
    with output_lock.claimed(directory, "output_dir"):
        with pytest.raises(
            OutputDirInUse, match=exactly(in_use("output_dir", directory, os.getpid()))
        ):
            with output_lock.claimed(directory, "output_dir"):
                pass
    assert list((tmp_path / "out").iterdir()) == []  # the lock file is removed with the lock
    with output_lock.claimed(directory, "output_dir"):
        pass


def test_a_second_pretraining_run_is_refused_and_the_killed_first_one_resumes(tmp_path):
    """Two real processes: the second refuses while the first trains; SIGKILL the first, and its
    resume is not blocked by the lock it held."""
    opts = pretraining_options(
        tmp_path,
        num_train_steps=100000,
        save_checkpoints_steps=2,
        iterations_per_loop=2,
        log_every=2,
    )
    flags = [
        f"--{name}={getattr(opts, name)}"
        for name in (
            "bert_config_file",
            "input_file",
            "output_dir",
            "max_seq_length",
            "max_predictions_per_seq",
            "train_batch_size",
            "learning_rate",
            "num_train_steps",
            "num_warmup_steps",
            "save_checkpoints_steps",
            "iterations_per_loop",
            "log_every",
        )
    ] + ["--do_train"]
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen(
            [sys.executable, str(REPO / "run_pretraining.py"), *flags],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
    try:
        deadline = time.monotonic() + 300
        while not tf.train.latest_checkpoint(opts.output_dir):
            assert first.poll() is None and time.monotonic() < deadline, (
                tmp_path / "first.log"
            ).read_text()[-3000:]
            time.sleep(0.1)
        second = run_script("run_pretraining.py", *flags)
        # The script words the setting as its flag.
        expected = in_use("output_dir", opts.output_dir, first.pid)
        expected = expected.replace("`output_dir`", "--output_dir")
        assert_fails_with_line(second, f"run_pretraining.py: error: {expected}")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL

    step = int(tf.train.latest_checkpoint(opts.output_dir).rsplit("-", 1)[1])
    run_pretraining(
        dataclasses.replace(opts, num_train_steps=step + 2), tf.distribute.get_strategy()
    )
    assert tf.train.latest_checkpoint(opts.output_dir).endswith(f"ckpt-{step + 2}")
    assert not (pathlib.Path(opts.output_dir) / ".bert_tf.lock").exists()


def test_fine_tuning_refuses_a_held_output_dir(tmp_path):
    options = finetuning_options(tmp_path)
    with output_lock.claimed(options.output_dir, "output_dir"):
        with pytest.raises(
            OutputDirInUse, match=exactly(in_use("output_dir", options.output_dir, os.getpid()))
        ):
            run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)


# -- object stores: a record instead of a lock ------------------------------------------------


def ram_directory() -> str:
    return f"ram://{uuid.uuid4().hex}/out"


def write_record(directory: str, **fields) -> None:
    """Another run's record: pid 4321 on the host `elsewhere`, started a minute ago and seen now."""
    now = time.time()
    values = {
        "run_id": "other",
        "host": "elsewhere",
        "pid": 4321,
        "started": now - 60,
        "heartbeat": now,
        **fields,
    }
    io_utils.atomic_write_text(os.path.join(directory, ".bert_tf.lock"), json.dumps(values))


def test_on_an_object_store_a_live_runs_record_refuses_and_a_killed_runs_is_replaced():
    directory = ram_directory()
    heartbeat = time.time() - 40
    write_record(directory, heartbeat=heartbeat)
    lapses = (
        " (if it was killed, its lock lapses at "
        f"{utc(heartbeat + output_lock.STALE_AFTER_SECONDS)})"
    )
    with pytest.raises(
        OutputDirInUse, match=exactly(in_use("output_dir", directory, 4321, "elsewhere", lapses))
    ):
        with output_lock.claimed(directory, "output_dir"):
            pass

    ended = subprocess.Popen(["true"])
    ended.wait()
    for killed in (
        {"heartbeat": time.time() - output_lock.STALE_AFTER_SECONDS - 1},  # silent too long
        {"host": HOST, "pid": ended.pid},  # this host's, and its pid is gone
    ):
        write_record(directory, **killed)
        with output_lock.claimed(directory, "output_dir"):
            assert record(directory)["pid"] == os.getpid()
        assert not tf.io.gfile.exists(os.path.join(directory, ".bert_tf.lock"))  # released


def test_on_an_object_store_the_heartbeat_refreshes_the_record(monkeypatch):
    monkeypatch.setattr(output_lock, "HEARTBEAT_SECONDS", 0.02)
    directory = ram_directory()
    with output_lock.claimed(directory, "output_dir"):
        first = record(directory)["heartbeat"]
        deadline = time.monotonic() + 30
        while record(directory)["heartbeat"] == first:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_on_an_object_store_a_run_whose_record_was_replaced_stops_before_its_next_save():
    directory = ram_directory()
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    model.compile(optimizer="adam")
    backup = TrainingBackup(model, f"{directory}/backup")
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(step=tf.Variable(1)), directory, max_to_keep=2
    )
    with output_lock.claimed(directory, "output_dir"):
        backup.on_epoch_end(0)
        checkpoints.save(manager, 1)
        write_record(directory)
        taken = exactly(
            f"`output_dir`={directory} was taken over by another run: pid 4321 on "
            f"elsewhere since {utc(record(directory)['started'])}; this run stops so "
            "that the two do not mix their outputs"
        )
        backup.step = 1
        with pytest.raises(OutputDirTakenOver, match=taken):
            backup.on_epoch_end(1)
        with pytest.raises(OutputDirTakenOver, match=taken):
            checkpoints.save(manager, 2)
    assert tf.train.latest_checkpoint(f"{directory}/backup").endswith("ckpt-0")
    assert tf.train.latest_checkpoint(directory).endswith("ckpt-1")
    assert record(directory)["run_id"] == "other"  # the other run's record is left to it


# -- output directories of another kind -----------------------------------------------------------


def another_kind(directory, found: str, other: str, kind: str) -> str:
    return exactly(
        f"`output_dir`={directory} holds a {other} run's outputs ({found}); a {kind} "
        f"run writes to a new or empty directory, or to an earlier {kind} run's: choose "
        "another `output_dir`"
    )


def _listing(directory) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in pathlib.Path(directory).rglob("*"))


def test_pretraining_refuses_a_fine_tuning_runs_output_dir(tmp_path):
    opts = pretraining_options(tmp_path)
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    save_model_checkpoint(model, os.path.join(opts.output_dir, "best"), {"accuracy": 1.0})
    before = _listing(opts.output_dir)
    with pytest.raises(
        OutputDirOfAnotherKind,
        match=another_kind(opts.output_dir, "best/", "fine-tuning", "pretraining"),
    ):
        run_pretraining(opts, tf.distribute.get_strategy())
    assert _listing(opts.output_dir) == before


def test_fine_tuning_refuses_a_pretraining_runs_output_dir(tmp_path):
    options = finetuning_options(tmp_path)
    model = BertPretrainer(tiny_encoder())
    model.build_with_dummy_inputs()
    tf.train.CheckpointManager(
        checkpoints.pretraining_checkpoint(model, keras.optimizers.AdamW()),
        options.output_dir,
        max_to_keep=1,
    ).save()
    before = _listing(options.output_dir)
    with pytest.raises(
        OutputDirOfAnotherKind,
        match=another_kind(options.output_dir, "ckpt-1", "pretraining", "fine-tuning"),
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    assert _listing(options.output_dir) == before
