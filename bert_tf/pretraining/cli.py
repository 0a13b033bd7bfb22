"""`run_pretraining.py`'s main: the flags to a pretraining run, or the embedded demo without
--input_file and --output_dir."""

from __future__ import annotations

from absl import flags, logging

from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.pretraining.driver import PretrainingOptions, run_pretraining
from bert_tf.training import runtime_flags
from bert_tf.training.cli import strategy_from_flags

FLAGS = flags.FLAGS


def _main(argv) -> None:
    reject_arguments(argv)
    if FLAGS.input_file is None and FLAGS.output_dir is None:
        if FLAGS.eval_file is not None:  # the demo would evaluate on its held-out articles instead
            raise flags.ValidationError(
                "--eval_file needs --output_dir (the demo evaluates on its own held-out articles)"
            )
        _run_demo()
        return
    # reads no --input_file
    evaluates_only = FLAGS.do_eval and not FLAGS.do_train and FLAGS.eval_file is not None
    # a real run's --output_dir must not get the demo's data
    if FLAGS.input_file is None and not evaluates_only:
        raise flags.ValidationError(
            "--input_file is required with --output_dir (without both, "
            "run_pretraining.py runs the demo)"
        )
    if FLAGS.output_dir is None:
        raise flags.ValidationError("--output_dir is required with --input_file")
    strategy = strategy_from_flags(FLAGS)
    run_pretraining(runtime_flags.options_from_flags(PretrainingOptions, FLAGS), strategy)


def _run_demo() -> None:
    """The embedded demo, with every flag the user set taking precedence over its setting."""
    from bert_tf.pretraining import demo  # only the demo fetches data

    if not FLAGS["verbosity"].present:  # the demo prints its own summary of each step
        logging.set_verbosity(logging.WARNING)
    given = [name for name in FLAGS if FLAGS[name].present]
    options = demo.demo_options(
        runtime_flags.options_from_flags(PretrainingOptions, FLAGS), given, FLAGS.demo_language
    )
    demo.run_demo(options, strategy_from_flags(FLAGS), FLAGS.demo_language, FLAGS.vocab_file)


def main(argv) -> None:
    run_reporting_user_errors(_main, argv)
