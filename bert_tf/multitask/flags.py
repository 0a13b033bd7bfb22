"""run_multitask.py's own flags; it also takes the fine-tuning flags (`bert_tf.finetuning.flags`).

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

SAMPLINGS = ("proportional", "uniform", "temperature")


def define_multitask_flags() -> None:
    """Defines --tasks, --task_sampling and --sampling_temperature."""
    flags.DEFINE_string(
        "tasks",
        None,
        "The tasks, comma-separated, each name:kind:data_dir[:weight]. kind is classifier "
        "(name is then the GLUE task, e.g. MRPC), ner, squad or multiple_choice; data_dir "
        "holds its files as the single-task script reads them; weight (default 1) scales "
        "its sampling probability, 0 = evaluated but never trained.",
    )
    flags.DEFINE_enum(
        "task_sampling",
        "proportional",
        SAMPLINGS,
        "How each step's task is drawn: in proportion to its training examples, uniformly, "
        "or by examples ** (1 / --sampling_temperature).",
    )
    flags.DEFINE_float(
        "sampling_temperature",
        2.0,
        "--task_sampling=temperature: 1 is proportional, larger is closer to uniform.",
        lower_bound=1.0,
    )
