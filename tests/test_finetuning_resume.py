"""A fine-tuning run that is killed resumes from output_dir/backup: at the step it was saved, from a
backup that a kill mid-save leaves readable, and with one-line errors for a backup it cannot use."""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import tiny_encoder, write_tiny_config
from bert_tf.finetuning import run_finetuning
from bert_tf.finetuning.best_checkpoint import read_best_metrics, save_model_checkpoint
from bert_tf.finetuning.training_backup import CorruptBackup, TrainingBackup
from bert_tf.models import BertClassifier
from bert_tf.tokenization import BertTokenizer
from bert_tf.training import distribution
from test_finetuning_driver import KeywordTask, _options

# KeywordTask's 512 training examples in batches of 64: 8 steps an epoch.
STEPS_PER_EPOCH = 8


class CrashingClassifier(BertClassifier):
    """BertClassifier whose training fails after `crash_at` steps, as a killed run."""

    crash_at = None

    def train_step(self, data):
        if self.crash_at is not None:
            tf.debugging.assert_less(
                self.optimizer.iterations,
                tf.constant(self.crash_at, tf.int64),
                message="simulated crash",
            )
        return super().train_step(data)


class CrashingTask(KeywordTask):
    """KeywordTask on a CrashingClassifier."""

    def __init__(self, options, tokenizer, crash_at=None):
        super().__init__(options, tokenizer)
        self.crash_at = crash_at

    def build_model(self, encoder):
        # The float16 test's skipped steps before its backup were set up on this head's start.
        model = CrashingClassifier(
            encoder, num_classes=2, dropout_rate=0.1, head_initializer="truncated_normal"
        )
        model.crash_at = self.crash_at
        return model


class OtherTrainingTextTask(CrashingTask):
    """CrashingTask whose training split is as long, of other texts."""

    def encode(self, split):
        encoded = super().encode(split)
        if split == "train":
            encoded.features["input_word_ids"] = encoded.features["input_word_ids"][::-1].copy()
        return encoded


def _resume_options(tmp_path, **overrides):
    return _options(
        tmp_path, **{"do_eval": False, "num_train_epochs": 2, "train_batch_size": 64, **overrides}
    )


def _run(options, crash_at=None):
    return run_finetuning(
        CrashingTask(options, BertTokenizer(options.vocab_file), crash_at), options
    )


def _crash(options, crash_at):
    with pytest.raises(tf.errors.InvalidArgumentError, match="simulated crash"):
        _run(options, crash_at)


def _weights(prefix):
    return {
        name: tf.train.load_checkpoint(prefix).get_tensor(name)
        for name, _ in tf.train.list_variables(prefix)
        if name.startswith("model/")
    }


def test_a_run_killed_mid_epoch_resumes_at_its_last_saved_step(tmp_path, capsys):
    vocab_size = len(open(_resume_options(tmp_path).vocab_file).read().split())
    (tmp_path / "dropout").mkdir()
    # a resume must draw the same masks
    config = write_tiny_config(
        tmp_path / "dropout",
        vocab_size=vocab_size,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )
    uninterrupted = _resume_options(
        tmp_path, output_dir=str(tmp_path / "uninterrupted"), bert_config_file=config
    )
    _run(uninterrupted)
    # 3 steps per call: calls end at steps 3, 6, 8 (the epoch's end, not 9), then 11, 14, 16.
    options = _resume_options(
        tmp_path, save_checkpoints_steps=4, iterations_per_loop=3, bert_config_file=config
    )
    _crash(options, crash_at=7)  # backed up at step 6, the end of the call that reaches step 4
    capsys.readouterr()
    _run(options)
    backup = tmp_path / "out" / "backup"
    assert (
        f"Resuming the interrupted run saved in {backup} at step 6 of 16 (epoch 1); delete that "
        "directory to start over instead" in capsys.readouterr().out
    )
    assert not backup.exists()
    # The same 16 steps on the same batches, learning rates and
    # dropout masks, one or 3 steps per call: the same weights.
    expected = _weights(str(tmp_path / "uninterrupted" / "best" / "ckpt"))
    got = _weights(str(tmp_path / "out" / "best" / "ckpt"))
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, atol=1e-6, err_msg=name)


class OverflowingTask(CrashingTask):
    """CrashingTask with its loss scaled up, so float16's first steps overflow and are skipped."""

    def loss(self, label_smoothing=0.0):
        cross_entropy = super().loss(label_smoothing)
        return lambda labels, logits: 300.0 * cross_entropy(labels, logits)


def test_a_float16_run_resumes_at_its_batch_though_steps_were_skipped(tmp_path, capsys):
    """The loss-scaled optimizer counts only the steps it applied; the backup counts batches."""
    options = _resume_options(tmp_path, save_checkpoints_steps=6, dtype="float16")
    try:
        distribution.set_precision("float16")
        with pytest.raises(tf.errors.InvalidArgumentError, match="simulated crash"):
            run_finetuning(
                OverflowingTask(options, BertTokenizer(options.vocab_file), crash_at=3), options
            )
        skipped = 6 - tf.train.load_checkpoint(
            str(tmp_path / "out" / "backup" / "ckpt-6")
        ).get_tensor("optimizer/inner_optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE")
        assert skipped > 0  # else this test shows nothing
        capsys.readouterr()
        run_finetuning(OverflowingTask(options, BertTokenizer(options.vocab_file)), options)
    finally:
        distribution.set_precision("float32")
    assert (
        "saved in " + str(tmp_path / "out" / "backup") + " at step 6 of 16"
        in capsys.readouterr().out
    )


CHANGED_SCHEDULES = [
    (
        {"train_batch_size": 32},
        "--train_batch_size is 32, but the interrupted run in {backup} had 64",
    ),
    ({"num_train_epochs": 3}, "--num_train_epochs is 3, but the interrupted run in {backup} had 2"),
    ({"dtype": "bfloat16"}, "--dtype is bfloat16, but the interrupted run in {backup} had float32"),
]


def test_a_backup_that_cannot_be_resumed_is_a_one_line_error_and_kept(tmp_path):
    """A resume on other batches or learning rates would mix two schedules in one model; another
    architecture cannot be restored. Each is refused, the
    backup kept for a resume with the right flags."""
    options = _resume_options(tmp_path)
    _crash(options, crash_at=10)  # backed up at the end of epoch 1, step 8
    backup = tmp_path / "out" / "backup"
    for change, message in CHANGED_SCHEDULES:
        expected = (
            message.format(backup=backup)
            + f"; resume with the flags and data of the run that wrote it, "
            f"or delete {backup} to start over"
        )
        with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
            _run(_resume_options(tmp_path, **change))
        assert (backup / "checkpoint").exists()

    # The same number of rows of other text: another file, column, language or task.
    other_data = OtherTrainingTextTask(options, BertTokenizer(options.vocab_file))
    with pytest.raises(
        ValueError,
        match=rf"^the training data's digest is [0-9a-f]{{16}}, but the interrupted run "
        rf"in {re.escape(str(backup))} had [0-9a-f]{{16}}; resume with the flags "
        rf"and data of the run that wrote it, or delete {re.escape(str(backup))} "
        "to start over$",
    ):
        run_finetuning(other_data, options)

    (tmp_path / "deeper").mkdir()
    deeper = write_tiny_config(
        tmp_path / "deeper",
        vocab_size=len(open(options.vocab_file).read().split()),
        num_hidden_layers=3,
    )
    escaped = re.escape(str(backup))
    with pytest.raises(
        ValueError,
        match=rf"^`bert_config_file`={re.escape(deeper)}: "
        rf"{escaped}/ckpt-8: the model's config does not match "
        r"the checkpoint's: num_hidden_layers 3 in the model, 2 "
        rf"in {escaped}/bert_config.json; resume with the config "
        rf"it was written with, or delete {escaped} to start "
        r"over$",
    ):
        _run(_resume_options(tmp_path, bert_config_file=deeper))

    _run(options)
    assert not backup.exists()


def _truncate(backup: pathlib.Path, step: int) -> None:
    """Cuts backup `step`'s data file short, as a disk that filled up leaves it."""
    (data,) = backup.glob(f"ckpt-{step}.data-*")
    with open(data, "r+b") as f:
        f.truncate(100)


def test_a_corrupt_backup_falls_back_to_the_one_before_it_or_says_how_to_start_over(
    tmp_path, capsys, caplog
):
    options = _resume_options(tmp_path, save_checkpoints_steps=4)
    _crash(options, crash_at=10)  # backed up at steps 4 and 8
    backup = tmp_path / "out" / "backup"
    damaged = tmp_path / "damaged" / "backup"  # both backups unreadable
    shutil.copytree(backup, damaged)
    _truncate(damaged, 4)
    _truncate(damaged, 8)
    with pytest.raises(
        CorruptBackup,
        match=rf"^{re.escape(str(damaged))}/ckpt-8: the backup is corrupt \([^\n]+\); "
        rf"delete {re.escape(str(damaged))} to start over$",
    ):
        _run(_resume_options(tmp_path, save_checkpoints_steps=4, output_dir=str(damaged.parent)))

    _truncate(backup, 8)
    capsys.readouterr()
    with caplog.at_level("WARNING", logger="absl"):
        _run(options)
    assert [
        m
        for m in caplog.messages
        if re.fullmatch(
            rf"{re.escape(str(backup))}/ckpt-8 is corrupt \([^\n]+\); "
            rf"resuming from {re.escape(str(backup))}/ckpt-4, the backup "
            "before it",
            m,
        )
    ]
    assert (
        f"Resuming the interrupted run saved in {backup} at step 4 of 16 (epoch 1)"
        in capsys.readouterr().out
    )
    assert not backup.exists() and (tmp_path / "out" / "best" / "ckpt.index").exists()


def test_corrupt_settings_and_best_metrics_are_one_line_errors_naming_them(tmp_path):
    """A resume reads settings.json and best/metrics.json: a broken one is named, at its break."""
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    model.compile(optimizer="adam")
    directory = str(tmp_path / "backup")
    # its first backup
    TrainingBackup(model, directory, settings={"train_batch_size": 64}).on_epoch_end(0)
    (tmp_path / "backup" / "settings.json").write_text('{"train_batch_size": 64,\n')
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(directory)}/settings.json:2:1: invalid JSON "
        r"\(Expecting property name enclosed in double quotes\)$",
    ):
        TrainingBackup(model, directory, settings={"train_batch_size": 64}).restore(
            "--bert_config_file"
        )
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "metrics.json").write_text('{"accuracy": }')
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(str(tmp_path))}/best/metrics.json:1:14: "
        r"invalid JSON \(Expecting value\)$",
    ):
        read_best_metrics(str(tmp_path))


class KilledTask(CrashingTask):
    """CrashingTask whose every evaluation scores 0.5, and which fails in `killed_in` ("evaluate" or
    "write_predictions") as a run killed there."""

    def __init__(self, options, tokenizer, crash_at=None, killed_in=None):
        super().__init__(options, tokenizer, crash_at)
        self.killed_in = killed_in

    def evaluate(self, split, encoded, outputs):
        self._killed("evaluate")
        return {"accuracy": 0.5}

    def write_predictions(self, split, encoded, outputs, output_dir):
        self._killed("write_predictions")
        return super().write_predictions(split, encoded, outputs, output_dir)

    def _killed(self, where):
        if self.killed_in == where:
            raise RuntimeError(f"simulated kill in {where}")


def test_a_run_killed_after_training_resumes_with_its_own_best_and_trains_nothing(tmp_path, capsys):
    """Killed in its last epoch's evaluation, a run leaves its backup at the
    final step beside an earlier run's best/; killed in its predictions,
    beside its own best/. Each time, its rerun writes what is missing."""
    options = _resume_options(tmp_path, num_train_epochs=1, do_eval=True, do_predict=True)
    tokenizer = BertTokenizer(options.vocab_file)
    earlier = BertClassifier(tiny_encoder(vocab_size=len(tokenizer.vocab)), num_classes=2)
    earlier.build_with_dummy_inputs()
    save_model_checkpoint(
        earlier, str(tmp_path / "out" / "best"), {"accuracy": 1.0, "epoch": 1, "run_id": "A"}
    )
    backup = tmp_path / "out" / "backup"
    resumed = f"Resuming the interrupted run saved in {backup} at step 8 of 8 (training done)"

    with pytest.raises(RuntimeError, match="simulated kill in evaluate"):
        run_finetuning(KilledTask(options, tokenizer, killed_in="evaluate"), options)
    capsys.readouterr()
    # crash_at=0: no training step
    with pytest.raises(RuntimeError, match="simulated kill in write_predictions"):
        run_finetuning(
            KilledTask(options, tokenizer, crash_at=0, killed_in="write_predictions"), options
        )
    printed = capsys.readouterr().out
    assert resumed in printed and "Epoch 1 eval: accuracy 0.5000 (best)" in printed
    # its own, not the earlier run's 1.0
    assert read_best_metrics(str(tmp_path / "out"))["accuracy"] == 0.5
    assert (backup / "checkpoint").exists()  # kept until the outputs are written

    run_finetuning(KilledTask(options, tokenizer, crash_at=0), options)
    printed = capsys.readouterr().out
    # its best kept: no "(best)"
    assert resumed in printed and "Epoch 1 eval: accuracy 0.5000\n" in printed
    assert f"Wrote {tmp_path / 'out' / 'test_predictions.txt'}" in printed
    assert not backup.exists()


def test_a_kill_while_the_backup_is_written_leaves_one_to_resume_from(tmp_path, capsys):
    """SIGKILL as the backup directory changes after its first backup, i.e. during the second."""
    repo = pathlib.Path(__file__).resolve().parents[1]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(repo), str(repo / "tests")]),
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    backup = tmp_path / "out" / "backup"
    worker = subprocess.Popen(
        [sys.executable, __file__, str(tmp_path)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = _wait_for(
        lambda: _listing(backup) if (backup / "checkpoint").exists() else None, worker
    )
    _wait_for(lambda: _listing(backup) != first or None, worker)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=60)
    assert worker.returncode == -signal.SIGKILL

    capsys.readouterr()
    _run(_resume_options(tmp_path, num_train_epochs=3))
    assert f"Resuming the interrupted run saved in {backup} at step " in capsys.readouterr().out
    assert not backup.exists() and (tmp_path / "out" / "best" / "ckpt.index").exists()


def _listing(directory: pathlib.Path):
    """Name, size and modification time of each file in `directory`."""
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir())


def _wait_for(condition, worker, timeout=300):
    """Polls `condition()` every millisecond until it gives a value, which it returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except FileNotFoundError:  # a file renamed or deleted between listing and stat
            value = None
        if value is not None:
            return value
        assert worker.poll() is None, f"the run ended first: {worker.stderr.read()[-3000:]}"
        time.sleep(0.001)
    worker.kill()
    raise AssertionError("timed out")


# the run that test_a_kill_while_the_backup_is_written_leaves_one_to_resume_from kills
if __name__ == "__main__":
    _run(_resume_options(pathlib.Path(sys.argv[1]), num_train_epochs=3))
