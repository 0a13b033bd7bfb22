"""The absl mains of the task scripts: `run_classifier.py`, `run_squad.py`, `run_ner.py` and
`run_multiple_choice.py` (each the `finetuning_main` of its task's builder), and
`extract_features.py`."""

from __future__ import annotations

from absl import flags, logging

from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.finetuning.cli import finetuning_main
from bert_tf.tasks import feature_extraction
from bert_tf.tasks.multiple_choice import MultipleChoiceTask
from bert_tf.tasks.question_answering import SquadTask
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.training.runtime_flags import options_from_flags

FLAGS = flags.FLAGS
# run_squad.py's own flags, each a `SquadTask` argument of its name.
_SQUAD_FLAGS = (
    "train_file",
    "predict_file",
    "version_2_with_negative",
    "doc_stride",
    "max_query_length",
    "n_best_size",
    "max_answer_length",
    "null_score_diff_threshold",
    "verbose_logging",
    "task",
)


def build_classifier_task(options, tokenizer, flag_values) -> SentencePredictionTask:
    """The `SentencePredictionTask` that run_classifier.py's flags describe."""
    names = ("text_a_column", "text_b_column", "label_column", "xnli_language")
    return SentencePredictionTask(
        options,
        tokenizer,
        flag_values.task_name,
        **{name: flag_values[name].value for name in names},
    )


def build_squad_task(options, tokenizer, flag_values) -> SquadTask:
    """The `SquadTask` that run_squad.py's flags describe."""
    return SquadTask(options, tokenizer, **{name: flag_values[name].value for name in _SQUAD_FLAGS})


run_classifier_main = finetuning_main(build_classifier_task)
run_squad_main = finetuning_main(build_squad_task)
# run_ner.py and run_multiple_choice.py have no flags of their own.
run_ner_main = finetuning_main(lambda options, tokenizer, _: TaggingTask(options, tokenizer))
run_multiple_choice_main = finetuning_main(
    lambda options, tokenizer, _: MultipleChoiceTask(options, tokenizer)
)


def _warn_about_tpu_flags() -> None:
    """Logs that google-research/bert's TPU flags, given, are not followed."""
    if FLAGS.use_tpu or FLAGS.master:
        logging.warning(
            "--use_tpu/--master: extract_features.py runs on this machine's CPU or GPU, not a TPU"
        )


def _extract_features(argv) -> None:
    reject_arguments(argv)
    _warn_about_tpu_flags()
    feature_extraction.run(options_from_flags(feature_extraction.FeatureExtractionOptions, FLAGS))


def extract_features_main(argv) -> None:
    """extract_features.py's absl main."""
    run_reporting_user_errors(_extract_features, argv)
