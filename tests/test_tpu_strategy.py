"""The TPU strategy's set-up without a TPU: TensorFlow's own TPUClusterResolver, a four-host cluster
of real gRPC servers on 127.0.0.1, and a TPU VM's `local`.

Connecting to a cluster changes the process's TensorFlow context, so the checks run in one fresh
process: this file is also its script.
"""

import json
import subprocess
import sys

import pytest

from worker_processes import REPO, free_ports, worker_env

HOSTS = 4


@pytest.fixture(scope="module")
def results() -> dict:
    run = subprocess.run(
        [sys.executable, __file__],
        cwd=REPO,
        env=worker_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_pod_slices_hosts_all_reach_the_strategy(results):
    """The resolver of four hosts, named as with --tpu_zone/--gcp_project, is the one the strategy
    connects to: the four hosts' devices join the context, and what fails is the next step, finding
    TPU cores on them. (Its master's address would name the first host only.)"""
    pod = results["pod"]
    assert pod["resolver_hosts"] == pod["addresses"] and len(pod["addresses"]) == HOSTS
    assert pod["master"] == f"grpc://{pod['addresses'][0]}"
    assert pod["error"].startswith(
        f"`tpu`={pod['tpu']}: cannot connect to the TPU: TPUs not found in the cluster"
    )
    assert pod["remote_tasks"] == list(range(HOSTS))


def test_a_tpu_vms_local_tpus_need_no_connection(results):
    local = results["local"]
    assert local["resolver_hosts"] == []
    assert local["error"].startswith(
        "`tpu`=local: cannot connect to the TPU: TPUs not found in the cluster"
    )
    assert local["remote_tasks"] == []


# -- the worker process ---------------------------------------------------------------------------


def _try_tpu(tpu: str, **kwargs) -> dict:
    """The resolver's hosts, then the error of building the strategy on `tpu`, and the remote tasks
    whose devices the context then holds."""
    import tensorflow as tf

    from bert_tf.training import distribution

    resolver = distribution.tpu_cluster_resolver(
        tpu, kwargs.get("tpu_zone"), kwargs.get("gcp_project")
    )
    result = {
        "tpu": tpu,
        "resolver_hosts": resolver.cluster_spec().as_dict().get("worker", []),
        "master": resolver.get_master(),
    }
    try:
        distribution.create_strategy(tpu=tpu, tpu_timeout_s=120, **kwargs)
        result["error"] = None  # a TPU strategy, on a machine without TPUs
    except distribution.DistributionError as e:
        result["error"] = str(e)
    devices = [tf.DeviceSpec.from_string(d.name) for d in tf.config.list_logical_devices("CPU")]
    result["remote_tasks"] = sorted(d.task for d in devices if d.job == "worker")
    return result


def main():
    import tensorflow as tf

    # first: the pod's connection below adds remote devices to the context
    local = _try_tpu("local")
    addresses = [f"127.0.0.1:{port}" for port in free_ports(HOSTS)]
    # The servers run while referenced: the name keeps them alive until the end.
    _servers = [
        tf.distribute.Server({"worker": addresses}, job_name="worker", task_index=i)
        for i in range(HOSTS)
    ]
    # A Cloud TPU's zone and project, as a pod slice is named; grpc:// addresses need no Cloud API.
    pod = _try_tpu(
        ",".join(f"grpc://{a}" for a in addresses),
        tpu_zone="us-central2-b",
        gcp_project="a-project",
    )
    print(json.dumps({"local": local, "pod": dict(pod, addresses=addresses)}))


if __name__ == "__main__":
    main()
