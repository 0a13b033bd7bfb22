"""One writer per output directory: a lock that a second run finds, naming the run that holds it.

A local directory is locked with `fcntl.flock` on its `.bert_tf.lock` file, which the kernel
releases when the process ends, however it ends: a killed run never blocks its resume. The
file holds the run's record (its id, host, pid and start), for the second run's error.

An object store (`gs://`, any `scheme://` path `tf.io.gfile` reads) has no lock: there the
record alone is the lock. The run refreshes its heartbeat every `HEARTBEAT_SECONDS`, and
checks before each checkpoint save that the record is still its own (`check_claim`). A
record is a killed run's, and a new run replaces it, when its heartbeat is older than
`STALE_AFTER_SECONDS`, or at once when it names this host and a pid that is not running.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

import tensorflow as tf
from absl import logging

from bert_tf import io_utils
from bert_tf.errors import UserInputError

# in the output directory; `.<name>.lock` beside a directory replaced as a whole
LOCK_FILE = ".bert_tf.lock"
HEARTBEAT_SECONDS = 60
STALE_AFTER_SECONDS = 300
_RECORD_WAIT_SECONDS = (
    2.0  # how long a refused run waits for the holder, which locks first, to write its record
)


class OutputDirInUse(UserInputError):
    """Another run holds the output directory: two writers would mix their checkpoints."""


class OutputDirTakenOver(UserInputError):
    """On an object store, another run replaced this run's record: this run stops writing."""


def is_object_store(path: str) -> bool:
    """Whether `path` names an object store (`gs://bucket/dir`), where no OS lock exists."""
    return "://" in path


def lock_path(directory: str, beside: bool = False) -> str:
    """The lock file of `directory`: inside it, or, `beside`, next to it (for a directory that
    its writer replaces as a whole, such as an export)."""
    directory = directory.rstrip("/")
    if beside:
        parent, name = os.path.split(directory)
        return os.path.join(parent, f".{name}.lock")
    return os.path.join(directory, LOCK_FILE)


# directory -> the claim this process holds on it
_claims: dict[str, _LocalClaim | _ObjectStoreClaim] = {}


@contextlib.contextmanager
def claimed(
    directory: str, flag: str, beside: bool = False, keep: Callable[[], bool] | None = None
):
    """Holds the lock of `directory` for the block; raises `OutputDirInUse` while another holds it.

    The directory that holds the lock file (`directory`, or its parent with `beside`) is created if
    missing, and removed again if the block fails and `keep()` is false.

    Args:
        directory: the output directory, local or on an object store.
        flag: the flag that names it, for errors (`output_dir`).
        beside: lock a file beside `directory` instead of one inside it.
        keep: after a failure, whether to keep what the run created; None: if it holds anything.

    Yields:
        The claim: `check()` raises `OutputDirTakenOver` once another run replaced it.
    """
    directory = os.fspath(directory).rstrip("/")
    where = os.path.dirname(directory) if beside else directory
    with io_utils.created_directories([where], flag, keep=keep or (lambda: _holds_anything(where))):
        path = lock_path(directory, beside)
        claim = (_ObjectStoreClaim if is_object_store(path) else _LocalClaim)(path, directory, flag)
        _claims[directory] = claim
        try:
            yield claim
        finally:
            del _claims[directory]
            claim.release()


def _holds_anything(directory: str) -> bool:
    return tf.io.gfile.isdir(directory) and bool(tf.io.gfile.listdir(directory))


def check_claim(path: str) -> None:
    """Raises `OutputDirTakenOver` if this process's claim on `path`, or on a directory above it,
    was replaced by another run's (object stores; a local lock cannot be). Call it before each
    checkpoint save; it does nothing where this process holds no claim."""
    path = os.fspath(path).rstrip("/")
    for directory, claim in list(_claims.items()):
        if path == directory or path.startswith(directory + "/"):
            claim.check()


def _new_record() -> dict[str, object]:
    now = time.time()
    return {
        "run_id": uuid.uuid4().hex,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": now,
        "heartbeat": now,
    }


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC"
    )


def _holder(record: dict | None) -> str:
    """The run a record names, as the errors say it."""
    if not record:
        return "another run, which is just starting"
    return f"another run: pid {record['pid']} on {record['host']} since {_utc(record['started'])}"


def _in_use(
    flag: str, directory: str, record: dict | None, lapses: float | None = None
) -> OutputDirInUse:
    lapse = f" (if it was killed, its lock lapses at {_utc(lapses)})" if lapses else ""
    return OutputDirInUse(
        f"`{flag}`={directory} is in use by {_holder(record)}{lapse}; wait "
        f"for it to end, or choose another `{flag}`"
    )


def _parse(text: str) -> dict | None:
    """A record as written, or None for an empty or partly written one."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return (
        record
        if isinstance(record, dict)
        and {"run_id", "host", "pid", "started", "heartbeat"} <= set(record)
        else None
    )


class _LocalClaim:
    """`fcntl.flock` on the lock file; the file is removed on release."""

    def __init__(self, path: str, directory: str, flag: str):
        self.path = path
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                record = self._wait_for_record(fd)
                os.close(fd)
                raise _in_use(flag, directory, record) from None
            if self._names(fd):
                break
            # the holder removed the file as it released it: lock the file now at `path`
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(_new_record()).encode())
        self._fd = fd

    def _names(self, fd: int) -> bool:
        """Whether `path` still names the file open as `fd`."""
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            return False

    @staticmethod
    def _wait_for_record(fd: int) -> dict | None:
        deadline = time.monotonic() + _RECORD_WAIT_SECONDS
        while (
            record := _parse(os.pread(fd, 4096, 0).decode(errors="replace"))
        ) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return record

    def check(self) -> None:
        """The kernel holds the lock as long as the process lives: nothing can replace it."""

    def release(self) -> None:
        # a failed run's directory may be removed already
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)
        os.close(self._fd)


class _ObjectStoreClaim:
    """The run's record at the lock path, refreshed by a heartbeat thread; removed on release."""

    def __init__(self, path: str, directory: str, flag: str):
        self.path, self.directory, self.flag = path, directory, flag
        found = self._read()
        if found and self._alive(found):
            raise _in_use(flag, directory, found, found["heartbeat"] + STALE_AFTER_SECONDS)
        if found:
            logging.warning(
                "%s: replaced the lock of a run that is gone (pid %s on %s, last seen %s)",
                directory,
                found["pid"],
                found["host"],
                _utc(found["heartbeat"]),
            )
        self.record = _new_record()
        self._write()
        # two runs that wrote at the same moment: the later write wins, the other stops
        self.check()
        self._stop = threading.Event()
        self._heartbeat = threading.Thread(
            target=self._beat, daemon=True, name="bert_tf-output-lock"
        )
        self._heartbeat.start()

    @staticmethod
    def _alive(record: dict) -> bool:
        if time.time() - record["heartbeat"] >= STALE_AFTER_SECONDS:
            return False
        if record["host"] != socket.gethostname():
            return True
        try:
            os.kill(record["pid"], 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process
            pass
        return True

    def _read(self) -> dict | None:
        if not tf.io.gfile.exists(self.path):
            return None
        with tf.io.gfile.GFile(self.path) as f:
            return _parse(f.read())

    def _write(self) -> None:
        io_utils.atomic_write_text(self.path, json.dumps(self.record))

    def _ours(self, record: dict | None) -> bool:
        return record is not None and record["run_id"] == self.record["run_id"]

    def check(self) -> None:
        found = self._read()
        if found is None:  # removed by hand: nobody else holds it
            self._write()
        elif not self._ours(found):
            raise OutputDirTakenOver(
                f"`{self.flag}`={self.directory} was taken over by "
                f"{_holder(found)}; this run stops so that the two do not mix "
                "their outputs"
            )

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                if not self._ours(self._read()):
                    return  # the next `check` says so
                self.record["heartbeat"] = time.time()
                self._write()
            except tf.errors.OpError as e:  # a transient store error: the next beat tries again
                logging.warning("%s: cannot refresh the lock (%s)", self.path, e.message)

    def release(self) -> None:
        self._stop.set()
        self._heartbeat.join()
        with contextlib.suppress(tf.errors.NotFoundError):
            if self._ours(self._read()):
                tf.io.gfile.remove(self.path)
