"""The flags of run_pretraining.py: google-research/bert's names, plus distribution and precision.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.data.flags import define_whole_word_mask_flags
from bert_tf.training import runtime_flags

# --optimizer's values (`bert_tf.training.optimization.OPTIMIZER_CLASSES` maps them to classes).
OPTIMIZERS = ("adamw", "lamb")


def define_pretraining_flags() -> None:
    # Model and data (google-research/bert names and defaults).
    flags.DEFINE_string("bert_config_file", None,
                        "bert_config.json of the model. Default: the one of the --output_dir being resumed, "
                        "else the one stored with --init_checkpoint; the embedded demo's is configs/tiny.")
    flags.DEFINE_string("input_file", None,
                        "Comma-separated globs of pretraining TFRecords. Without it and --output_dir, the "
                        "embedded demo fetches the public Wikipedia sample and builds them. An eval-only run "
                        "(--do_eval without --do_train) with --eval_file needs none.")
    flags.DEFINE_string("eval_file", None,
                        "Comma-separated globs of held-out TFRecords for --do_eval (default: --input_file); "
                        "read only with --do_eval.")
    flags.DEFINE_string("output_dir", None, "Checkpoints, TensorBoard logs and eval_results.txt.")
    flags.DEFINE_string("init_checkpoint", None,
                        "Initial weights when --output_dir holds no checkpoint yet: Google TF1, Model Garden "
                        "TF2, Hugging Face or bert_tf.")
    flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the records.", lower_bound=1)
    flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked positions per record.", lower_bound=1)
    # What to run.
    flags.DEFINE_bool("do_train", False, "Whether to train.")
    flags.DEFINE_bool("do_eval", False, "Whether to evaluate on --eval_file.")
    # Batches, steps and schedule.
    flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.", lower_bound=1)
    flags.DEFINE_integer("eval_batch_size", 8, "Global eval batch size.", lower_bound=1)
    flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.", lower_bound=0.0)
    flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.", lower_bound=1)
    flags.DEFINE_integer("num_warmup_steps", 10000, "Linear warmup steps.", lower_bound=0)
    flags.DEFINE_integer("save_checkpoints_steps", 1000, "Checkpoint every this many steps.", lower_bound=1)
    flags.DEFINE_integer("iterations_per_loop", 1000,
                         "Train steps per host call (one tf.function running a loop of steps). A call also "
                         "ends at each multiple of --log_every and --save_checkpoints_steps.",
                         lower_bound=1)
    flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval batches (global batches of "
                         "--eval_batch_size, whatever the replica count).", lower_bound=1)
    # Additions.
    flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "AdamW (the paper) or LAMB.")
    flags.DEFINE_integer("masked_lm_samples", 0,
                         "Train the masked-LM softmax on the batch's label tokens plus this many vocab ids "
                         "drawn at random (a sampled softmax, bert_tf.models.sampled_masked_lm) instead of "
                         "the whole vocab; 0: the whole vocab. Evaluation always scores the whole vocab.",
                         lower_bound=0)
    flags.DEFINE_bool("dynamic_masking", False,
                      "Mask on the fly from raw text, fresh every epoch (RoBERTa): --input_file and "
                      "--eval_file are then text corpora (one sentence per line, blank line between "
                      "documents), and --vocab_file is needed.")
    define_whole_word_mask_flags()
    flags.DEFINE_bool("do_lower_case", True, "Lower-case input text (dynamic masking and the demo).")
    flags.DEFINE_string("vocab_file", None, "vocab.txt (dynamic masking and the demo).")
    flags.DEFINE_enum("demo_language", "en", ["en", "zh"],
                      "The demo's language: en, English Wikipedia with bert-base-uncased's vocab; zh, Chinese "
                      "news with bert-base-chinese's vocab and whole-word masking of rjieba's words.")
    flags.DEFINE_integer("log_every", None,
                         "Log metrics to the console and TensorBoard every N steps. Default: "
                         "--iterations_per_loop. Metrics are read between loops, so N must be at least "
                         "--iterations_per_loop.", lower_bound=1)
    flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints to keep.", lower_bound=1)
    flags.DEFINE_integer("random_seed", 12345, "Seed for shuffling and initialisation.")
    runtime_flags.define_runtime_flags()
