"""The flags every fine-tuning script shares: google-research/bert's names, plus our options.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.training import runtime_flags

REQUIRED = ("vocab_file", "output_dir")
# Flags that name one split's file (run_squad.py's), with the --do_* flags that read the split:
# a script that has them needs --data_dir only for a
# split that the run reads and they leave unnamed.
SPLIT_FILE_FLAGS = {"train_file": ("do_train",), "predict_file": ("do_eval", "do_predict")}


def define_finetuning_flags(**defaults) -> None:
    """Defines the common flags; `defaults` overrides a default, e.g. `max_seq_length=384`."""
    def default(name, value):
        return defaults.get(name, value)

    flags.DEFINE_string("data_dir", None, "The task's data directory.")
    flags.DEFINE_string("vocab_file", None, "The vocab.txt the model was pretrained with (default: a TF "
                        "Hub --init_checkpoint's assets/vocab.txt).")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (true for uncased models).")
    flags.DEFINE_string("bert_config_file", None,
                        "bert_config.json of the model (default: the config beside --init_checkpoint).")
    flags.DEFINE_string("init_checkpoint", None,
                        "Pretrained weights: Google TF1, Model Garden TF2, Hugging Face, bert_tf, or a TF "
                        "Hub encoder SavedModel (whose recorded do_lower_case is the default).")
    flags.DEFINE_string("output_dir", None, "Checkpoints, eval_results.txt and predictions.")
    flags.DEFINE_bool("do_train", False, "Whether to fine-tune on the training set.")
    flags.DEFINE_bool("do_eval", False, "Whether to evaluate on the dev set(s).")
    flags.DEFINE_bool("do_predict", False, "Whether to write predictions for the test set(s).")
    flags.DEFINE_integer("max_seq_length", default("max_seq_length", 128),
                         "Maximum WordPiece tokens per input, [CLS] and [SEP] included.", lower_bound=3)
    flags.DEFINE_integer("train_batch_size", default("train_batch_size", 32), "Global training batch size.",
                         lower_bound=1)
    flags.DEFINE_integer("eval_batch_size", 8, "Eval batch size.", lower_bound=1)
    flags.DEFINE_integer("predict_batch_size", 8, "Predict batch size.", lower_bound=1)
    flags.DEFINE_float("learning_rate", default("learning_rate", 5e-5), "Peak learning rate of AdamW.",
                       lower_bound=0.0)
    flags.DEFINE_float("num_train_epochs", default("num_train_epochs", 3.0), "Training epochs (may be fractional).")
    flags.DEFINE_float("warmup_proportion", 0.1, "Fraction of the training steps with linear warmup.",
                       lower_bound=0.0, upper_bound=1.0)
    flags.DEFINE_float("layerwise_lr_decay", 1.0,
                       "Discriminative fine-tuning: each layer below the top gets this factor on its "
                       "learning rate (1 = off; 0.9 to 0.95 are common).", lower_bound=0.0, upper_bound=1.0)
    flags.DEFINE_float("label_smoothing", 0.0, "Label smoothing of the classification losses.",
                       lower_bound=0.0, upper_bound=1.0)
    flags.DEFINE_bool("gradual_unfreezing", False,
                      "Unfreeze the layers top down, evenly over the first epoch (ULMFiT).")
    flags.DEFINE_float("mlm_aux_weight", 0.0,
                       "Weight of an auxiliary masked-LM loss on the task's own text (0 = off), "
                       "against catastrophic forgetting.", lower_bound=0.0)
    flags.DEFINE_integer("save_checkpoints_steps", None,
                         "Also back up the training state to output_dir/backup every this many steps "
                         "(default: at each epoch's end only), so that a killed run loses at most this "
                         "many steps when started again.", lower_bound=1)
    flags.DEFINE_integer("iterations_per_loop", 1,
                         "How many training steps to make in each tf.function call (Keras's "
                         "steps_per_execution): fewer host round trips, the same weights. Default 1, not "
                         "google-research/bert's 1000: with more, a --save_checkpoints_steps backup waits for "
                         "the end of the call that reaches its step, and a multi-replica strategy other than "
                         "tpu is refused.", lower_bound=1)
    flags.DEFINE_string("export_dir", None, "Export the fine-tuned model as a SavedModel here.")
    flags.DEFINE_integer("random_seed", 12345, "Seed for initialisation, shuffling and dropout.")
    runtime_flags.define_runtime_flags()


def check_required_flags(flag_values: flags.FlagValues) -> None:
    """Raises `flags.ValidationError` naming a required flag that was left out.

    `--data_dir` is required unless the script names each split's file with its own flag
    (`SPLIT_FILE_FLAGS`) and the run gives the file of every split it reads.
    """
    if flag_values["data_dir"].value is None:
        for file_flag, do_flags in SPLIT_FILE_FLAGS.items():
            if file_flag not in flag_values:
                raise flags.ValidationError("--data_dir is required")
            if flag_values[file_flag].value is None and any(flag_values[name].value for name in do_flags):
                raise flags.ValidationError(f"--data_dir is required without --{file_flag}")
    for name in REQUIRED:
        if flag_values[name].value is None:
            raise flags.ValidationError(f"--{name} is required")
