"""The runtime flags' strategy: the command line's side of `distribution`."""

from __future__ import annotations

import tensorflow as tf
from absl import flags, logging

from bert_tf.training.distribution import check_num_tpu_cores, create_strategy, set_precision


def strategy_from_flags(flag_values: flags.FlagValues):
    """Sets the precision policy and builds the strategy the runtime flags ask for.

    --tpu_name (or --master) implies the TPU unless --use_tpu=false is given explicitly.

    Args:
        flag_values: the parsed flags, with `runtime_flags.define_runtime_flags`' among them.

    Returns:
        The strategy (`distribution.create_strategy`).
    """
    tpu_flag = "tpu" if flag_values.tpu_name or not flag_values.master else "master"
    tpu = flag_values[tpu_flag].value
    # As google-research/bert: --use_tpu=false means no TPU.
    if tpu and flag_values["use_tpu"].present and not flag_values.use_tpu:
        logging.warning("--use_tpu=false: --%s=%s is ignored", tpu_flag, tpu)
        tpu = None
    if flag_values.use_tpu and not tpu:
        raise flags.ValidationError("--use_tpu needs --tpu_name (or --tpu, or --master)")
    set_precision(flag_values.dtype)
    strategy = create_strategy(
        flag_values.distribution_strategy,
        tpu=tpu,
        tpu_zone=flag_values.tpu_zone,
        gcp_project=flag_values.gcp_project,
        tpu_timeout_s=flag_values.tpu_timeout,
        tpu_flag=tpu_flag,
    )
    if isinstance(strategy, tf.distribute.TPUStrategy):
        check_num_tpu_cores(flag_values.num_tpu_cores, strategy.num_replicas_in_sync)
    logging.info(
        "Strategy %s with %d replicas", type(strategy).__name__, strategy.num_replicas_in_sync
    )
    return strategy
