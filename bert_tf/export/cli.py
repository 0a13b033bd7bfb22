"""`export_model.py`'s main: a checkpoint to a task SavedModel or the TF-Hub-style pair."""

from __future__ import annotations

from absl import flags

from bert_tf import output_lock
from bert_tf.checkpoints import StartingCheckpoint, resolve_bert_config, resolve_init_checkpoint
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.errors import UserInputError
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.export.hub_export import export_hub_pair
from bert_tf.export.model_types import CLASS_MODEL_TYPES
from bert_tf.export.task_export import export_task_model
from bert_tf.export.weight_dtype import with_weights_in
from bert_tf.tokenization import BertTokenizer

FLAGS = flags.FLAGS
# Flags that only some model types use, with those types:
# given for another, they are refused, not dropped.
_FLAGS_FOR = (
    (("labels", "num_classes"), CLASS_MODEL_TYPES),
    (
        (
            "max_answer_length",
            "doc_stride",
            "max_query_length",
            "version_2_with_negative",
            "null_score_diff_threshold",
            "n_best_size",
        ),
        ("span",),
    ),
)


def _export_hub(model, tokenizer: BertTokenizer) -> None:
    paths = export_hub_pair(
        model, FLAGS.export_dir, tokenizer=tokenizer, seq_length=FLAGS.max_seq_length
    )
    print("\n".join(f"{name}: {path}" for name, path in paths.items()))


def _export_task(model, tokenizer: BertTokenizer, labels: list[str] | None) -> None:
    print(
        export_task_model(
            model,
            FLAGS.export_dir,
            tokenizer=tokenizer,
            seq_length=FLAGS.max_seq_length,
            labels=labels,
            max_answer_length=FLAGS.max_answer_length,
            doc_stride=FLAGS.doc_stride,
            max_query_length=FLAGS.max_query_length,
            version_2_with_negative=FLAGS.version_2_with_negative,
            null_score_diff_threshold=FLAGS.null_score_diff_threshold,
            n_best_size=FLAGS.n_best_size,
            jit_compile=FLAGS.jit_compile,
        )
    )


def _main(argv) -> None:
    reject_arguments(argv)
    with output_lock.claimed(FLAGS.export_dir, "export_dir", beside=True):  # one export at a time
        _export()


def _export() -> None:
    hub = FLAGS.model_type == "hub"
    if FLAGS.jit_compile and hub:
        raise UserInputError(
            "--jit_compile applies to task models (their serving_default), not --model_type=hub"
        )
    _check_flags_apply()
    checkpoint = resolve_init_checkpoint(FLAGS.init_checkpoint)
    config = resolve_bert_config(FLAGS.bert_config_file, checkpoint)
    tokenizer = BertTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
    if hub:
        model = model_from_checkpoint(checkpoint, "hub", config)
        _export_hub(with_weights_in(model, FLAGS.dtype), tokenizer)
    else:
        labels = _labels(checkpoint)
        num_classes = FLAGS.num_classes or (len(labels) if labels else None)
        model = model_from_checkpoint(checkpoint, FLAGS.model_type, config, num_classes, labels)
        _export_task(with_weights_in(model, FLAGS.dtype), tokenizer, labels)


def _check_flags_apply() -> None:
    """Refuses a flag that the --model_type does not use, which would drop it silently."""
    for names, model_types in _FLAGS_FOR:
        given = [f"--{name}" for name in names if FLAGS[name].present]
        if given and FLAGS.model_type not in model_types:
            raise UserInputError(
                f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --model_type="
                f"{' or '.join(model_types)}, not --model_type={FLAGS.model_type}"
            )
    if FLAGS["null_score_diff_threshold"].present and not FLAGS.version_2_with_negative:
        raise UserInputError(
            "--null_score_diff_threshold applies with --version_2_with_negative (SQuAD 2.0) only"
        )


def _labels(checkpoint: StartingCheckpoint) -> list[str] | None:
    """--labels, else the class names stored with the checkpoint: those a
    bert_tf fine-tuning run saved beside it, or a Hugging Face classifier's.
    Either way `model_from_checkpoint` checks their number."""
    if FLAGS.labels or FLAGS.model_type not in CLASS_MODEL_TYPES:
        return FLAGS.labels
    return list(checkpoint.labels) if checkpoint.labels else None


def main(argv) -> None:
    run_reporting_user_errors(_main, argv)
