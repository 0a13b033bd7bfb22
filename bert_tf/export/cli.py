"""`export_model.py`'s flags and main: a checkpoint to a task SavedModel or the TF-Hub-style pair."""

from __future__ import annotations

from absl import flags

from bert_tf.checkpoints import checkpoint_labels, resolve_bert_config
from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.export.checkpoint_model import MODEL_TYPES, model_from_checkpoint
from bert_tf.export.hub_export import export_hub_pair
from bert_tf.export.task_export import export_task_model
from bert_tf.tokenization import BertTokenizer

FLAGS = flags.FLAGS
REQUIRED = ("model_type", "init_checkpoint", "vocab_file", "export_dir")
# Flags that only some model types use, with those types: given for another, they are refused, not dropped.
_FLAGS_FOR = ((("labels", "num_classes"), ("classifier", "token")),
              (("max_answer_length", "doc_stride", "max_query_length", "version_2_with_negative",
                "null_score_diff_threshold"), ("span",)))


def define_flags() -> None:
    flags.DEFINE_enum("model_type", None, list(MODEL_TYPES), "What to export; hub = preprocessing + encoder pair.")
    flags.DEFINE_string("init_checkpoint", None, "The checkpoint (TF1, Model Garden, Hugging Face, bert_tf).")
    flags.DEFINE_string("bert_config_file", None, "bert_config.json; default: the one stored with the checkpoint.")
    flags.DEFINE_string("vocab_file", None, "The WordPiece vocab; stored in the export as an asset.")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
    flags.DEFINE_string("export_dir", None, "Where the SavedModel goes.")
    flags.DEFINE_list("labels", None, "Class names, in label-id order (classifier, token); default: the "
                      "names stored with the checkpoint (a bert_tf fine-tuning run's labels.json, a "
                      "Hugging Face id2label).")
    flags.DEFINE_integer("num_classes", None, "Classes; default: the checkpoint head's width (another "
                         "number is an error).", lower_bound=1)
    flags.DEFINE_integer("max_seq_length", 128, "Longest packed sequence of the text signatures: at least 4, "
                         "or 3 for token, which packs one text (one [SEP]) where the others pack two.",
                         lower_bound=3)
    flags.DEFINE_integer("max_answer_length", 30, "Span: longest answer in tokens.")
    flags.DEFINE_integer("doc_stride", 128, "Span: tokens between the starts of context windows.")
    flags.DEFINE_integer("max_query_length", 64, "Span: question tokens kept.", lower_bound=1)
    flags.DEFINE_bool("version_2_with_negative", False, "Span: SQuAD 2.0, an empty answer when [CLS] wins.")
    flags.DEFINE_float("null_score_diff_threshold", 0.0, "Span, SQuAD 2.0: an empty answer when the [CLS] null "
                       "score exceeds the best span's by more than this, as run_squad.py's flag.")
    flags.DEFINE_bool("jit_compile", False, "Compile serving_default with XLA (faster on CPU; TF Serving then "
                      "needs --xla_cpu_compilation_enabled). Task models only.")
    for name in REQUIRED:
        flags.mark_flag_as_required(name)


def _export_hub(model, tokenizer: BertTokenizer) -> None:
    paths = export_hub_pair(model, FLAGS.export_dir, tokenizer=tokenizer, seq_length=FLAGS.max_seq_length)
    print("\n".join(f"{name}: {path}" for name, path in paths.items()))


def _export_task(model, tokenizer: BertTokenizer, labels: list[str] | None) -> None:
    print(export_task_model(model, FLAGS.export_dir, tokenizer=tokenizer, seq_length=FLAGS.max_seq_length,
                            labels=labels, max_answer_length=FLAGS.max_answer_length,
                            doc_stride=FLAGS.doc_stride, max_query_length=FLAGS.max_query_length,
                            version_2_with_negative=FLAGS.version_2_with_negative,
                            null_score_diff_threshold=FLAGS.null_score_diff_threshold,
                            jit_compile=FLAGS.jit_compile))


def _main(argv) -> None:
    reject_arguments(argv)
    hub = FLAGS.model_type == "hub"
    if FLAGS.jit_compile and hub:
        raise ValueError("--jit_compile applies to task models (their serving_default), not --model_type=hub")
    _check_flags_apply()
    config = resolve_bert_config(FLAGS.bert_config_file, FLAGS.init_checkpoint)
    tokenizer = BertTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
    if hub:
        _export_hub(model_from_checkpoint(FLAGS.init_checkpoint, "hub", config), tokenizer)
    else:
        labels = _labels()
        num_classes = FLAGS.num_classes or (len(labels) if labels else None)
        _export_task(model_from_checkpoint(FLAGS.init_checkpoint, FLAGS.model_type, config, num_classes, labels),
                     tokenizer, labels)


def _check_flags_apply() -> None:
    """Refuses a flag given for a --model_type that does not use it, which would drop it silently."""
    for names, model_types in _FLAGS_FOR:
        given = [f"--{name}" for name in names if FLAGS[name].present]
        if given and FLAGS.model_type not in model_types:
            raise ValueError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --model_type="
                             f"{' or '.join(model_types)}, not --model_type={FLAGS.model_type}")
    if FLAGS["null_score_diff_threshold"].present and not FLAGS.version_2_with_negative:
        raise ValueError("--null_score_diff_threshold applies with --version_2_with_negative (SQuAD 2.0) only")


def _labels() -> list[str] | None:
    """--labels, else the class names stored with the checkpoint: those a bert_tf fine-tuning run saved
    beside it, or a Hugging Face classifier's. Either way `model_from_checkpoint` checks their number."""
    if FLAGS.labels or FLAGS.model_type not in ("classifier", "token"):
        return FLAGS.labels
    names = checkpoint_labels(FLAGS.init_checkpoint)
    return list(names) if names else None


def main(argv) -> None:
    run_reporting_user_errors(_main, argv)
