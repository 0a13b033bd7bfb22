"""The distribution strategies and precisions a run can ask for, by name.

Apart from `distribution`, which builds them, so that the scripts' flag modules list them
without importing TensorFlow.
"""

# The strategies `distribution.create_strategy` builds.
STRATEGIES = ("tpu", "mirrored", "multi_worker_mirrored", "one_device", "default")
# Each precision, with the Keras dtype policy that `distribution.set_precision` sets for it.
DTYPE_POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}
