"""Atomic outputs: a file or a directory is replaced whole, and a failure leaves no temporary behind."""

import glob

import pytest
import tensorflow as tf

from bert_tf import io_utils
from bert_test_utils import write_file


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
    # A killed run leaves its temporary behind: a later `--input_file='out/x.tfrecord*'` must not read it.
    path = str(tmp_path / "x.tfrecord")
    with io_utils.atomic_output(path) as tmp, io_utils.atomic_directory(f"{path}-dir") as tmp_dir:
        open(tmp, "w").close()
        assert tf.io.gfile.glob(path + "*") == [] and glob.glob(path + "*") == []
        assert glob.glob(str(tmp_path / "*")) == []
        assert {tmp, tmp_dir} <= set(tf.io.gfile.glob(str(tmp_path / ".*")))  # beside it: one file system


def test_replace_directory_swaps_in_the_new_copy(tmp_path):
    write_file(tmp_path / "best" / "old.txt", "old")
    write_file(tmp_path / "new" / "new.txt", "new")
    io_utils.replace_directory(tmp_path / "new", tmp_path / "best")
    assert [p.name for p in (tmp_path / "best").iterdir()] == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["best"]  # neither the new nor the old copy is left


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
    # `tf.io.gfile.glob('out/*')`, as google-research/bert's and Model Garden's readers expand --input_file,
    # matches hidden names: a killed run's truncated temporary would be read as a record file.
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
    # Killed between replace_directory's two renames: the old copy is the only one, and a failed write keeps it.
    write_file(tmp_path / ".kept.old-0f0f0f0f" / "old.txt", "old")
    with pytest.raises(RuntimeError), io_utils.atomic_directory(tmp_path / "kept"):
        raise RuntimeError("the write fails")
    assert (tmp_path / "kept" / "old.txt").read_text() == "old"
