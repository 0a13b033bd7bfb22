"""Distribution strategies (TPU, and Model Garden's distribute_utils for the others) and precision
policies."""

from __future__ import annotations

import threading

import keras
import tensorflow as tf
from official.common import distribute_utils

from bert_tf.errors import UserInputError
from bert_tf.training.runtime_choices import DTYPE_POLICIES, STRATEGIES


class DistributionError(UserInputError, RuntimeError):
    """A strategy that cannot be built: an unreachable TPU, a bad flag."""


def create_strategy(
    distribution_strategy: str = "default",
    tpu: str | None = None,
    tpu_zone: str | None = None,
    gcp_project: str | None = None,
    num_gpus: int | None = None,
    tpu_timeout_s: float = 120.0,
    tpu_flag: str = "tpu",
) -> tf.distribute.Strategy:
    """Builds the strategy that `--distribution_strategy` / `--tpu` name.

    A TPU that does not answer within `tpu_timeout_s`, or a strategy the runtime refuses,
    raises `DistributionError` rather than hanging.

    Args:
        distribution_strategy: one of `STRATEGIES`.
        tpu: the TPU (forms: `tpu_cluster_resolver`), or None; a TPU implies the TPU strategy.
        tpu_zone, gcp_project: the Cloud TPU's zone and project, for a TPU name.
        num_gpus: the GPUs of the mirrored strategies; None: those TensorFlow sees (none: CPU).
        tpu_timeout_s: how long to wait for the TPU.
        tpu_flag: the flag that named the TPU, for errors.

    Returns:
        The strategy.
    """
    if tpu:
        distribution_strategy = "tpu"
    if distribution_strategy not in STRATEGIES:
        raise DistributionError(
            f"`distribution_strategy` must be one of {', '.join(STRATEGIES)}; "
            f"got {distribution_strategy!r}"
        )
    if distribution_strategy == "default":
        return tf.distribute.get_strategy()
    if distribution_strategy == "tpu":
        return _with_timeout(
            lambda: tpu_strategy(tpu_cluster_resolver(tpu, tpu_zone, gcp_project)),
            tpu_timeout_s,
            f"`{tpu_flag}`={tpu}",
        )
    if num_gpus is None:
        # Physical, not logical: listing logical devices starts the runtime, after which
        # MultiWorkerMirroredStrategy can no longer configure its collective ops.
        num_gpus = len(tf.config.list_physical_devices("GPU"))
    try:
        return distribute_utils.get_distribution_strategy(distribution_strategy, num_gpus=num_gpus)
    except RuntimeError as e:
        # TensorFlow's runtime refusing the strategy: one line, not a traceback
        raise DistributionError(f"`distribution_strategy`={distribution_strategy}: {e}") from e


def tpu_cluster_resolver(
    tpu: str | None, zone: str | None = None, project: str | None = None
) -> tf.distribute.cluster_resolver.TPUClusterResolver:
    """The cluster resolver of a TPU: every host of a pod slice, or a TPU VM's own chips.

    Args:
        tpu: "local" for the TPUs of this TPU VM; a Cloud TPU name (a pod slice's hosts are
            asked of the Cloud TPU API, in `zone` and `project`); or grpc:// addresses, one
            per host, comma-separated.
        zone: the Cloud TPU's GCE zone; None: this VM's.
        project: the Cloud TPU's GCP project; None: this VM's.

    Returns:
        TensorFlow's resolver, to be passed as it is to `tpu_strategy`.
    """
    return tf.distribute.cluster_resolver.TPUClusterResolver(tpu, zone=zone, project=project)


def tpu_strategy(
    resolver: tf.distribute.cluster_resolver.TPUClusterResolver,
) -> tf.distribute.TPUStrategy:
    """Connects to the resolver's hosts, initializes their TPUs and builds the strategy on them.

    The strategy is built on the resolver itself, not its master's address, which would
    name the first host of a pod slice only. A TPU VM's own chips (an empty cluster)
    need no connection.

    Args:
        resolver: from `tpu_cluster_resolver`.

    Returns:
        The TPU strategy, one replica per TPU core of the cluster.
    """
    if resolver.cluster_spec().as_dict():
        tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def _with_timeout(build, timeout_s: float, what: str):
    """Runs `build()` in a daemon thread; a clear error if it fails or outlasts `timeout_s`."""
    result = {}

    def target():
        try:
            result["value"] = build()
        except Exception as e:  # reported below, in the caller's thread
            result["error"] = e

    thread = threading.Thread(target=target, daemon=True, name="tpu-connect")
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise DistributionError(f"{what}: no TPU answered within {timeout_s:g} s")
    if "error" in result:
        error = result["error"]
        raise DistributionError(f"{what}: cannot connect to the TPU: {error}") from error
    return result["value"]


def check_num_tpu_cores(num_tpu_cores: int | None, replicas: int) -> None:
    """google-research/bert's --num_tpu_cores, when given, must be the TPU strategy's `replicas`:
    the strategy runs one replica on every core of the TPU, so fewer or more cannot be had."""
    if num_tpu_cores is not None and num_tpu_cores != replicas:
        raise DistributionError(
            f"`num_tpu_cores`={num_tpu_cores}: the TPU has {replicas} cores, "
            "and the TPU strategy uses all of them; pass "
            f"`num_tpu_cores`={replicas} or leave it out"
        )


def check_global_batch(flag: str, batch_size: int, strategy: tf.distribute.Strategy) -> None:
    """A global batch must split evenly over the replicas; the error names the flag."""
    replicas = strategy.num_replicas_in_sync
    if batch_size % replicas:
        raise UserInputError(f"`{flag}`={batch_size} is not divisible by the {replicas} replicas")


def set_precision(dtype: str) -> None:
    """Sets the global Keras dtype policy for `--dtype` (float32, bfloat16 or float16).

    bfloat16 and float16 are mixed policies: variables stay float32, and the models
    keep softmax, LayerNorm and the losses in float32.
    """
    try:
        keras.mixed_precision.set_dtype_policy(DTYPE_POLICIES[dtype])
    except KeyError:
        raise UserInputError(
            f"`dtype` must be one of {', '.join(DTYPE_POLICIES)}; got {dtype!r}"
        ) from None
