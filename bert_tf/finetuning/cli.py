"""`finetuning_main`: the absl main of every fine-tuning script."""

from __future__ import annotations

from typing import Callable

from absl import flags

from bert_tf.checkpoints.checkpoint_flags import take_vocab_from_checkpoint
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.flags import check_required_flags
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import FineTuningTask
from bert_tf.tokenization import BertTokenizer
from bert_tf.training import runtime_flags
from bert_tf.training.cli import strategy_from_flags

FLAGS = flags.FLAGS
# The script's task, from the common options, the tokenizer and the script's own flags.
TaskBuilder = Callable[[FineTuningOptions, BertTokenizer, flags.FlagValues], FineTuningTask]


def finetuning_main(build_task: TaskBuilder):
    """An absl main: checks the common flags, builds the strategy, tokenizer and task, and runs.

    Example (a task's builder, which reads its own flags, its main in `my_tasks/cli.py`, and
    its script):
        main = finetuning_main(build_review_stars_task)      # in my_tasks/cli.py
        define_finetuning_flags()                            # in the script
        script.run("my_tasks.cli:main")
    """

    def _main(argv) -> None:
        reject_arguments(argv)
        take_vocab_from_checkpoint(FLAGS)
        check_required_flags(FLAGS)
        options = runtime_flags.options_from_flags(FineTuningOptions, FLAGS)
        strategy = strategy_from_flags(FLAGS)
        tokenizer = BertTokenizer(options.vocab_file, options.do_lower_case)
        run_finetuning(build_task(options, tokenizer, FLAGS), options, strategy)

    return lambda argv: run_reporting_user_errors(_main, argv)
