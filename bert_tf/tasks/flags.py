"""The task scripts' own flags: run_classifier.py's, run_squad.py's and extract_features.py's.

The fine-tuning scripts also define the common flags (`bert_tf.finetuning.flags`).
Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.compat_flags import define_ignored_flags
from bert_tf.shared_flags import SPAN_FLAGS, define_shared_flags
from bert_tf.tasks.pooling import POOLINGS


def define_classifier_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """run_classifier.py's flags: task, a `--task_name=csv|tsv` file's columns, XNLI's language."""
    define = dict(flag_values=flag_values)
    flags.DEFINE_string(
        "task_name",
        None,
        "The task: a GLUE task (e.g. MRPC, SST-2, MNLI), XNLI, or csv/tsv.",
        **define,
    )
    flags.DEFINE_string(
        "text_a_column",
        "text",
        "csv/tsv task: the header name of the (first) text column.",
        **define,
    )
    flags.DEFINE_string(
        "text_b_column",
        None,
        "csv/tsv task: the header name of the second text of a pair.",
        **define,
    )
    flags.DEFINE_string(
        "label_column", "label", "csv/tsv task: the header name of the label column.", **define
    )
    flags.DEFINE_string(
        "xnli_language",
        "zh",
        "XNLI task: the language trained (multinli.train.<language>.tsv), "
        "evaluated and predicted (the xnli.dev.tsv and xnli.test.tsv rows of that language).",
        **define,
    )


def define_squad_flags() -> None:
    """run_squad.py's own flags (google-research/bert's names and defaults)."""
    flags.DEFINE_string(
        "train_file",
        None,
        "SQuAD JSON for training (default: train-v1.1.json or train-v2.0.json in --data_dir).",
    )
    flags.DEFINE_string(
        "predict_file",
        None,
        "SQuAD JSON to evaluate and predict (default: dev-v1.1.json or dev-v2.0.json in "
        "--data_dir).",
    )
    define_shared_flags(*SPAN_FLAGS)
    flags.DEFINE_enum(
        "task",
        "squad",
        ["squad", "cmrc2018"],
        "squad: the official SQuAD EM/F1 (over words). cmrc2018: CMRC 2018, the Chinese SQuAD "
        "(files cmrc2018_{train,dev}.json in --data_dir), with its character-level EM/F1.",
    )
    flags.DEFINE_bool(
        "verbose_logging",
        False,
        "Log each case that data processing skips or adjusts: a training question skipped (its "
        "answer is not at its answer_start), a training answer taken with the context's "
        "whitespace or left out, a question whose best answer is 'empty' (no valid span).",
    )


def define_feature_extraction_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """google-research/bert's `extract_features.py` flags, plus `--pooling`; its TPU flags are
    accepted so that its command lines run, but the features are computed on this machine."""
    define = dict(flag_values=flag_values)
    define_shared_flags(
        "input_file",
        "output_file",
        "vocab_file",
        "bert_config_file",
        "init_checkpoint",
        "max_seq_length",
        "do_lower_case",
        "use_tpu",
        "master",
        "num_tpu_cores",
        **define,
    )
    flags.DEFINE_string(
        "layers", "-1,-2,-3,-4", "Comma-separated block indexes to output (-1 = last).", **define
    )
    flags.DEFINE_integer("batch_size", 32, "Inputs per forward pass.", lower_bound=1, **define)
    flags.DEFINE_enum(
        "pooling",
        "none",
        POOLINGS,
        "Also write a sentence vector under `pooled`: "
        "the last layer's [CLS] vector (cls) or the mean of the chosen layers over "
        "real tokens (mean).",
        **define,
    )
    define_ignored_flags("use_one_hot_embeddings", **define)
    flags.mark_flags_as_required(
        ["input_file", "output_file", "vocab_file", "init_checkpoint"], flag_values=flag_values
    )
