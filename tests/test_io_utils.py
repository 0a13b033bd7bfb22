"""Atomic outputs: a file or directory is replaced whole; a failure leaves no temporary behind."""

import glob
import re

import pytest
import tensorflow as tf

from bert_test_utils import write_file
from bert_tf import io_utils


def test_atomic_output_failure_keeps_the_old_file(tmp_path):
    path = tmp_path / "results.txt"
    io_utils.atomic_write_text(path, "old")
    with pytest.raises(RuntimeError, match="crash"):
        with io_utils.atomic_output(path) as tmp:
            open(tmp, "w").write("half")
            raise RuntimeError("crash")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.txt"]


def test_temporary_names_match_no_glob_of_the_output(tmp_path):
    # A killed run leaves its temporary behind: a later
    # `--input_file='out/x.tfrecord*'` must not read it.
    path = str(tmp_path / "x.tfrecord")
    with io_utils.atomic_output(path) as tmp, io_utils.atomic_directory(f"{path}-dir") as tmp_dir:
        open(tmp, "w").close()
        assert tf.io.gfile.glob(path + "*") == [] and glob.glob(path + "*") == []
        assert glob.glob(str(tmp_path / "*")) == []
        # beside it: one file system
        assert {tmp, tmp_dir} <= set(tf.io.gfile.glob(str(tmp_path / ".*")))


def test_replace_directory_swaps_in_the_new_copy(tmp_path):
    write_file(tmp_path / "best" / "old.txt", "old")
    write_file(tmp_path / "new" / "new.txt", "new")
    io_utils.replace_directory(tmp_path / "new", tmp_path / "best")
    assert [p.name for p in (tmp_path / "best").iterdir()] == ["new.txt"]
    # neither the new nor the old copy is left
    assert [p.name for p in tmp_path.iterdir()] == ["best"]


def test_replace_directory_creates_a_missing_target(tmp_path):
    write_file(tmp_path / "new" / "new.txt", "new")
    io_utils.replace_directory(str(tmp_path / "new"), str(tmp_path / "best") + "/")
    assert (tmp_path / "best" / "new.txt").read_text() == "new"


def test_replace_directory_failure_puts_the_old_copy_back(tmp_path):
    write_file(tmp_path / "best" / "old.txt", "old")
    with pytest.raises(tf.errors.NotFoundError):
        io_utils.replace_directory(tmp_path / "missing", tmp_path / "best")
    assert (tmp_path / "best" / "old.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["best"]


def test_replace_directory_failure_removes_the_new_copy(tmp_path):
    write_file(tmp_path / "new" / "new.txt", "new")
    with pytest.raises(tf.errors.NotFoundError):
        io_utils.replace_directory(tmp_path / "new", tmp_path / "no_parent" / "best")
    assert list(tmp_path.iterdir()) == []


def test_atomic_directory_failure_keeps_the_old_directory(tmp_path):
    write_file(tmp_path / "best" / "old.txt", "old")
    with pytest.raises(RuntimeError, match="crash"):
        with io_utils.atomic_directory(tmp_path / "best") as tmp:
            io_utils.atomic_write_text(f"{tmp}/half.txt", "half")
            raise RuntimeError("crash")
    assert [p.name for p in (tmp_path / "best").iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["best"]


def test_atomic_directory_replaces_the_old_directory(tmp_path):
    write_file(tmp_path / "best" / "old.txt", "old")
    with io_utils.atomic_directory(tmp_path / "best") as tmp:
        io_utils.atomic_write_text(f"{tmp}/new.txt", "new")
    assert [p.name for p in (tmp_path / "best").iterdir()] == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["best"]


def test_the_next_write_removes_what_a_killed_write_left(tmp_path):
    # `tf.io.gfile.glob('out/*')`, as google-research/bert's and Model
    # Garden's readers expand --input_file, matches hidden names: a
    # killed run's truncated temporary would be read as a record file.
    write_file(tmp_path / ".x.tmp-1a2b3c4d", "half")
    write_file(tmp_path / ".best.tmp-1a2b3c4d" / "half.txt", "half")
    write_file(tmp_path / ".best.old-0f0f0f0f" / "old.txt", "old")
    others = [".x.tmp-notmine", ".xy.tmp-1a2b3c4d", "x.tmp-1a2b3c4d", ".best.txt.tmp-1a2b3c4d"]
    for name in others:  # not a temporary of x or best
        write_file(tmp_path / name, "kept")
    assert str(tmp_path / ".x.tmp-1a2b3c4d") in tf.io.gfile.glob(str(tmp_path / "*"))
    io_utils.atomic_write_text(tmp_path / "x", "new")
    with io_utils.atomic_directory(tmp_path / "best") as tmp:
        io_utils.atomic_write_text(f"{tmp}/new.txt", "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x", "best", *others])
    # Killed between replace_directory's two renames: the
    # old copy is the only one, and a failed write keeps it.
    write_file(tmp_path / ".kept.old-0f0f0f0f" / "old.txt", "old")
    with pytest.raises(RuntimeError), io_utils.atomic_directory(tmp_path / "kept"):
        raise RuntimeError("the write fails")
    assert (tmp_path / "kept" / "old.txt").read_text() == "old"


def test_remove_directory_renames_it_aside_first_and_clears_a_killed_removal(tmp_path):
    """A kill mid-deletion must not leave part of a directory under its name (a training backup
    without its data file would be resumed, and fail): it is renamed aside, then deleted; what a
    killed removal left aside goes with the next removal."""
    write_file(tmp_path / "backup" / "checkpoint", "state")
    write_file(tmp_path / ".backup.deleted-1a2b3c4d" / "ckpt-8.index", "half")  # a killed removal's
    write_file(tmp_path / "backups" / "kept.txt", "kept")
    io_utils.remove_directory(tmp_path / "backup")
    assert [p.name for p in tmp_path.iterdir()] == ["backups"]
    io_utils.remove_directory(tmp_path / "backup")  # none: nothing to do


def test_created_directories_a_failed_block_removes_the_outermost_each_created(tmp_path):
    (tmp_path / "existing").mkdir()
    wanted = [tmp_path / "new" / "deeper", tmp_path / "new", tmp_path / "existing" / "sub" / "leaf"]
    with pytest.raises(RuntimeError), io_utils.created_directories(wanted, "output_dir"):
        assert all(path.is_dir() for path in wanted)
        raise RuntimeError("the run fails")
    assert [p.name for p in tmp_path.iterdir()] == ["existing"]
    assert list((tmp_path / "existing").iterdir()) == []
    with io_utils.created_directories(wanted, "output_dir"):
        pass
    assert all(path.is_dir() for path in wanted)  # a block that succeeds keeps them


def test_created_directories_keeps_what_keep_asks_for(tmp_path):
    out = tmp_path / "out"
    with (
        pytest.raises(RuntimeError),
        io_utils.created_directories(
            [out], "output_dir", keep=lambda: (out / "ckpt-1.index").exists()
        ),
    ):
        write_file(out / "ckpt-1.index", "a checkpoint")
        raise RuntimeError("the run fails after its first checkpoint")
    assert (out / "ckpt-1.index").exists()


def test_created_directories_names_the_flag_of_one_it_cannot_create(tmp_path):
    plain = write_file(tmp_path / "plain.txt", "not a folder\n")
    message = f"`output_file`: cannot create the directory {plain}/sub ({plain} is not a directory)"
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        with io_utils.created_directories(
            [tmp_path / "new", plain / "sub"], "output_file", error=RuntimeError
        ):
            pass
    # the one it created before is removed
    assert [p.name for p in tmp_path.iterdir()] == ["plain.txt"]


def test_remove_interrupted_checkpoint_saves_removes_only_tfs_temporaries(tmp_path):
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(v=tf.Variable(1.0)), tmp_path, max_to_keep=None
    )
    manager.save()
    # the merge of ckpt-2's shards fails: TF leaves `ckpt-2_temp/` behind
    (tmp_path / "ckpt-2.index").mkdir()
    with pytest.raises(tf.errors.FailedPreconditionError):
        manager.save()
    state = write_file(tmp_path / f"checkpoint.tmp{'0a1b2c3d' * 4}", "killed while written")
    others = [
        "ckpt-2_temp.txt",
        "ckpt_temp",
        "my-ckpt-3_temp",
        "checkpoint.tmp-notes",
        "ckpt-1.index",
    ]
    for name in others[:-1]:
        write_file(tmp_path / name, "kept")
    assert (tmp_path / "ckpt-2_temp" / "part-00000-of-00001.index").exists()
    removed = io_utils.remove_interrupted_checkpoint_saves(tmp_path)
    assert sorted(removed) == [str(state), str(tmp_path / "ckpt-2_temp")]
    assert set(others) <= {p.name for p in tmp_path.iterdir()} and not state.exists()
    assert not (tmp_path / "ckpt-2_temp").exists()
