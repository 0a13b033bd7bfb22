"""Tests with worker processes: a cluster's TF_CONFIGs on free local ports; waiting on workers."""

import concurrent.futures
import contextlib
import json
import os
import pathlib
import socket
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parents[1]


def worker_env() -> dict[str, str]:
    """The environment of a worker process: bert_tf and the tests
    importable, TensorFlow's C++ INFO and WARNING lines off."""
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]),
        TF_CPP_MIN_LOG_LEVEL="2",
    )


def finish(*processes: subprocess.Popen, timeout: float = 300) -> list[str]:
    """Each process's stdout, waiting on all of them at once.

    When one fails, or `timeout` passes, the others are killed, and the test fails
    with the stderr of each process that failed or was killed.
    """
    with concurrent.futures.ThreadPoolExecutor(len(processes)) as pool:
        futures = [pool.submit(process.communicate) for process in processes]
        pending, deadline = set(futures), time.monotonic() + timeout
        while (
            pending
            and not any(process.returncode for process in processes)
            and time.monotonic() < deadline
        ):
            _, pending = concurrent.futures.wait(
                pending, deadline - time.monotonic(), concurrent.futures.FIRST_COMPLETED
            )
        unfinished = [i for i, process in enumerate(processes) if process.poll() is None]
        for i in unfinished:
            processes[i].kill()
        outputs = [future.result() for future in futures]
    failures = []
    for i, (process, (_, err)) in enumerate(zip(processes, outputs)):
        if process.returncode != 0:
            how = (
                "was killed unfinished" if i in unfinished else f"exited with {process.returncode}"
            )
            failures.append(f"worker {i} {how}; its stderr ends:\n{err[-3000:]}")
    assert not failures, "\n".join(failures)
    return [out for out, _ in outputs]


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports: every socket stays bound until all are chosen."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


def tf_configs(workers: int) -> list[str]:
    """Each worker's TF_CONFIG, `workers` on free 127.0.0.1 ports; the first is the chief."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(workers)]}
    return [
        json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
        for i in range(workers)
    ]
