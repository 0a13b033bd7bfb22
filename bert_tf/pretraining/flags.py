"""The flags of run_pretraining.py: google-research/bert's names, plus distribution and precision.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.shared_flags import define_shared_flags
from bert_tf.training import runtime_flags

# --optimizer's values (`bert_tf.training.optimization.OPTIMIZER_CLASSES` maps them to classes).
OPTIMIZERS = ("adamw", "lamb")


def define_pretraining_flags() -> None:
    # Model and data (google-research/bert names and defaults).
    define_shared_flags("bert_config_file", "input_file")
    flags.DEFINE_string(
        "eval_file",
        None,
        "Comma-separated globs of held-out TFRecords for --do_eval (default: --input_file); "
        "read only with --do_eval.",
    )
    define_shared_flags(
        "output_dir", "init_checkpoint", "max_seq_length", "max_predictions_per_seq"
    )
    # What to run.
    define_shared_flags("do_train", "do_eval")
    # Batches, steps and schedule.
    define_shared_flags("train_batch_size", "eval_batch_size", "learning_rate")
    flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.", lower_bound=1)
    flags.DEFINE_integer("num_warmup_steps", 10000, "Linear warmup steps.", lower_bound=0)
    define_shared_flags(
        "save_checkpoints_steps",
        "iterations_per_loop",
        save_checkpoints_steps=1000,
        iterations_per_loop=1000,
    )
    flags.DEFINE_integer(
        "max_eval_steps",
        100,
        "Maximum number of eval batches (global batches of "
        "--eval_batch_size, whatever the replica count).",
        lower_bound=1,
    )
    # Additions.
    flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "AdamW (the paper) or LAMB.")
    flags.DEFINE_integer(
        "masked_lm_samples",
        0,
        "Train the masked-LM softmax on the batch's label tokens plus this many vocab ids "
        "drawn at random (a sampled softmax, bert_tf.models.sampled_masked_lm) instead of "
        "the whole vocab; 0: the whole vocab. Evaluation always scores the whole vocab.",
        lower_bound=0,
    )
    flags.DEFINE_bool(
        "dynamic_masking",
        False,
        "Mask on the fly from raw text, fresh every epoch (RoBERTa): --input_file and "
        "--eval_file are then text corpora (one sentence per line, blank line between "
        "documents), and --vocab_file is needed.",
    )
    define_shared_flags(
        "do_whole_word_mask",
        "word_segmenter",
        "next_sentence_prediction",
        "do_lower_case",
        "vocab_file",
    )
    flags.DEFINE_enum(
        "demo_language",
        "en",
        ["en", "zh"],
        "The demo's language: en, English Wikipedia with bert-base-uncased's vocab; zh, Chinese "
        "news with bert-base-chinese's vocab and whole-word masking of rjieba's words.",
    )
    flags.DEFINE_integer(
        "log_every",
        None,
        "Log metrics to the console and TensorBoard every N steps. Default: "
        "--iterations_per_loop. Metrics are read between loops, so N must be at least "
        "--iterations_per_loop.",
        lower_bound=1,
    )
    flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints to keep.", lower_bound=1)
    define_shared_flags("random_seed")
    runtime_flags.define_runtime_flags()
