"""`run_multitask.py`'s absl main: refuses the fine-tuning flags it has no use for, then runs
`run_multitask`."""

from __future__ import annotations

from absl import flags, logging

from bert_tf.checkpoints.checkpoint_flags import take_vocab_from_checkpoint
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.finetuning.flags import REQUIRED
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.multitask.runner import run_multitask
from bert_tf.multitask.task_list import parse_tasks
from bert_tf.tokenization import BertTokenizer
from bert_tf.training import runtime_flags

FLAGS = flags.FLAGS
# Common fine-tuning flags that a multi-task run has no use for, and why.
_UNSUPPORTED = {
    "data_dir": "each task names its data directory in --tasks",
    "do_predict": "",
    "predict_batch_size": "",
    "gradual_unfreezing": "",
    "mlm_aux_weight": "",
    "iterations_per_loop": "",
    "dtype": "",
    "distribution_strategy": "",
    "use_tpu": "",
    "tpu_name": "",
    "master": "",
    "num_tpu_cores": "",
}


def _main(argv) -> None:
    reject_arguments(argv)
    for name, why in _UNSUPPORTED.items():
        if FLAGS[name].present:
            raise flags.ValidationError(
                f"--{name} is not supported by run_multitask.py" + (f": {why}" if why else "")
            )
    take_vocab_from_checkpoint(FLAGS)
    for name in REQUIRED:
        if FLAGS[name].value is None:
            raise flags.ValidationError(f"--{name} is required")
    specs = parse_tasks(FLAGS.tasks)
    options = runtime_flags.options_from_flags(FineTuningOptions, FLAGS)
    tokenizer = BertTokenizer(options.vocab_file, options.do_lower_case)
    logging.info("Tasks: %s", specs)
    run_multitask(specs, options, tokenizer, FLAGS.task_sampling, FLAGS.sampling_temperature)


def main(argv) -> None:
    """run_multitask.py's absl main."""
    run_reporting_user_errors(_main, argv)
