"""The absl mains of the task scripts: `run_classifier.py`, `run_squad.py`, `run_ner.py` and
`run_multiple_choice.py` (each the `finetuning_main` of its task's builder), and
`extract_features.py`."""

from __future__ import annotations

from absl import flags

from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.finetuning.cli import finetuning_main
from bert_tf.tasks import (
    feature_extraction,
    multiple_choice,
    question_answering,
    sentence_prediction,
    tagging,
)

run_classifier_main = finetuning_main(sentence_prediction.build_task)
run_squad_main = finetuning_main(question_answering.build_task)
run_ner_main = finetuning_main(tagging.build_task)
run_multiple_choice_main = finetuning_main(multiple_choice.build_task)


def _extract_features(argv) -> None:
    reject_arguments(argv)
    feature_extraction.run(flags.FLAGS)


def extract_features_main(argv) -> None:
    """extract_features.py's absl main."""
    run_reporting_user_errors(_extract_features, argv)
