"""`TrainingBackup`: a fine-tuning run's training state, from which a killed run resumes."""

from __future__ import annotations

import json
import os
import uuid

import keras
import tensorflow as tf
from absl import logging

from bert_tf import output_lock, text_files
from bert_tf.bert_config import CONFIG_FILE
from bert_tf.checkpoints.loader import check_stored_config
from bert_tf.errors import UserInputError
from bert_tf.io_utils import atomic_write_text, remove_directory

BACKUP_DIR = "backup"  # in the output directory: a run killed mid-training resumes from it
SETTINGS_FILE = (
    "settings.json"  # the flags a resume must share with the run that wrote the backup, and its id
)
RUN_ID = "run_id"  # in settings.json and the best checkpoint's metrics.json; not a setting
_KEPT = 2  # backups kept: one damaged on disk (a disk that filled up) leaves the one before it


class CorruptBackup(UserInputError):
    """No backup in the directory can be read: the run cannot resume, only start over."""


class TrainingBackup(keras.callbacks.Callback):
    """The training state in `directory` (`output_dir/backup`), for a killed run to resume from.

    A `tf.train.CheckpointManager` of the model, its optimizer (slots and step count), its
    random states (dropout's seed generators: a resume draws the masks the interrupted run
    would have) and the number of batches trained (a float16 optimizer counts only the
    steps it applied), saved at each epoch's end and every `save_steps` steps (with several
    steps per call, `steps_per_execution`, at the end of the call that reaches the step;
    each epoch has its own `fit` call). A checkpoint is complete before the manager's state
    file names it, and the oldest of the last two is deleted only then, so a kill at any
    moment leaves a checkpoint to resume from, and one that cannot be read leaves the one
    before it. Each save first checks that the output directory is still this run's
    (`output_lock.check_claim`). The encoder's bert_config.json beside it refuses a resume
    with another architecture, and
    `settings.json` (what decides the batches, the learning rates and the loss: flags and
    the training set's size, named as a user reads them) a resume with others, which
    would mix two schedules. `run_id` names the run: a new one for a run that starts
    without a backup, the interrupted run's (from settings.json) for one that resumes.
    `restore_from` is where the interrupted run's backup is, when it is not `directory`
    (a worker other than the chief saves into a directory of its own, but resumes from the chief's).
    """

    def __init__(
        self,
        model: keras.Model,
        directory: str,
        save_steps: int | None = None,
        settings: dict[str, object] | None = None,
        restore_from: str | None = None,
    ):
        super().__init__()
        self.directory = directory
        self.restore_from = restore_from or directory
        self.save_steps = save_steps
        self.settings = settings or {}
        weights = {id(v) for v in model.weights}
        self._batches = tf.Variable(0, dtype=tf.int64, trainable=False, name="batches")
        self.checkpoint = tf.train.Checkpoint(
            model=model,
            optimizer=model.optimizer,
            batches=self._batches,
            # the seed generators'
            random_states=[v for v in model.variables if id(v) not in weights],
        )
        self.manager = tf.train.CheckpointManager(self.checkpoint, directory, max_to_keep=_KEPT)
        self.step = 0  # the batches the model's weights have been trained on
        self._epoch_start = 0  # `step` when the current epoch's `fit` call began
        self.run_id = uuid.uuid4().hex  # `restore` gives it the interrupted run's
        self._saved_step = None

    def restore(self, config_flag: str) -> int:
        """Restores the newest backup that can be read,
        if any; returns its global step (0 without one).

        A newer backup that cannot be read is left out (with a warning), and the manager goes on
        from the one restored; `CorruptBackup` where none can be read. `config_flag` names where
        this run's config comes from, for the error of a backup written with another architecture.
        """
        latest = tf.train.latest_checkpoint(self.restore_from)
        if latest is None:
            return 0
        check_stored_config(
            latest,
            self.checkpoint.model,
            config_flag,
            "resume with the config it was written with, "
            f"or delete {self.restore_from} to start over",
        )
        written = self._read_settings()
        self._check_settings(written)
        self.run_id = written.get(RUN_ID, self.run_id)  # a backup without one has no best to match
        model, optimizer = self.checkpoint.model, self.checkpoint.optimizer
        # the driver's is; LossScaleOptimizer.build would add its variables again
        if not optimizer.built:
            optimizer.build(model.trainable_variables)  # slots exist before they are restored
        restored = self._restore_readable(self._backups() or [latest])
        # its own backups: saves go on from it
        if restored != latest and self.restore_from == self.directory:
            self._forget_after(restored)
        self.step = self._saved_step = int(self._batches.numpy())
        return self.step

    def _backups(self) -> list[str]:
        """The backups in `restore_from`, oldest first."""
        state = tf.train.get_checkpoint_state(self.restore_from)
        return list(state.all_model_checkpoint_paths) if state else []

    def _restore_readable(self, backups: list[str]) -> str:
        """Restores the newest of `backups` (oldest first) that can be read; returns it."""
        unreadable = []  # (backup, why), newest first
        for backup in reversed(backups):
            try:
                self.checkpoint.restore(backup).assert_existing_objects_matched()
            except (tf.errors.OpError, IndexError) as e:  # a file truncated, damaged or gone
                unreadable.append((backup, _first_line(e)))
                continue
            except (AssertionError, ValueError) as e:  # it holds what no model of these flags has
                raise UserInputError(
                    f"{backup}: cannot resume from it ({_first_line(e)}); resume with the flags of "
                    f"the run that wrote it, or delete {self.restore_from} to start over"
                ) from None
            for newer, why in unreadable:
                logging.warning(
                    "%s is corrupt (%s); resuming from %s, the backup before it", newer, why, backup
                )
            return backup
        newest, why = unreadable[0]
        raise CorruptBackup(
            f"{newest}: the backup is corrupt ({why}); delete {self.restore_from} to start over"
        )

    def _forget_after(self, restored: str) -> None:
        """Makes `restored` the manager's newest backup, so that saves go on from it; the unreadable
        ones after it stay on disk until a save of their
        step replaces them or the backup is removed."""
        state = tf.train.get_checkpoint_state(self.directory)
        stamps = dict(zip(state.all_model_checkpoint_paths, state.all_model_checkpoint_timestamps))
        tf.compat.v1.train.update_checkpoint_state(
            self.directory,
            restored,
            [restored],
            all_model_checkpoint_timestamps=[stamps[restored]],
            last_preserved_timestamp=state.last_preserved_timestamp,
        )
        self.manager = tf.train.CheckpointManager(
            self.checkpoint, self.directory, max_to_keep=_KEPT
        )

    def _read_settings(self) -> dict[str, object]:
        """settings.json as the interrupted run wrote it ({} if it has none)."""
        saved = os.path.join(self.restore_from, SETTINGS_FILE)
        return text_files.read_json(saved, ValueError) if tf.io.gfile.exists(saved) else {}

    def _check_settings(self, written: dict[str, object]) -> None:
        for name, value in self.settings.items():
            if name in written and written[name] != value:
                raise UserInputError(
                    f"{name} is {value}, but the interrupted run in {self.restore_from} had "
                    f"{written[name]}; resume with the flags and data of the run that wrote it, or "
                    f"delete {self.restore_from} to start over"
                )

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self.step

    def on_train_batch_end(self, batch, logs=None):
        """`batch` is the call's last batch (a call runs `steps_per_execution` of them); the epoch's
        last call stops at the epoch's `steps`."""
        before, self.step = self.step, self._epoch_start + min(batch + 1, self.params["steps"])
        if self.save_steps and self.step // self.save_steps > before // self.save_steps:
            self._save()

    def on_epoch_end(self, epoch, logs=None):
        if self.step != self._saved_step:
            self._save()

    def _save(self) -> None:
        output_lock.check_claim(self.directory)
        if self._saved_step is None:  # this run's first backup: its config goes first
            tf.io.gfile.makedirs(self.directory)
            self.checkpoint.model.encoder.bert_config.to_json_file(
                os.path.join(self.directory, CONFIG_FILE)
            )
            settings = {**self.settings, RUN_ID: self.run_id}
            atomic_write_text(
                os.path.join(self.directory, SETTINGS_FILE), json.dumps(settings, indent=2) + "\n"
            )
        self._batches.assign(self.step)
        self.manager.save(checkpoint_number=self.step)
        self._saved_step = self.step

    def remove(self) -> None:
        """Deletes the backup after the outputs are written (a kill leaves it whole or gone)."""
        remove_directory(self.directory)


def _first_line(error: Exception) -> str:
    return str(error).strip().split("\n")[0][:200] or type(error).__name__
