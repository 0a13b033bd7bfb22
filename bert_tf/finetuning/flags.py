"""The flags every fine-tuning script shares: google-research/bert's names, plus our options.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.head_initializers import HEAD_INITIALIZERS
from bert_tf.shared_flags import define_shared_flags
from bert_tf.training import runtime_flags

REQUIRED = ("vocab_file", "output_dir")
# Flags that name one split's file (run_squad.py's), with the --do_* flags that read the split:
# a script that has them needs --data_dir only for a
# split that the run reads and they leave unnamed.
SPLIT_FILE_FLAGS = {"train_file": ("do_train",), "predict_file": ("do_eval", "do_predict")}


def define_finetuning_flags(**defaults) -> None:
    """Defines the common flags; `defaults` gives a script its own default for a shared flag
    whose help names it (`bert_tf.shared_flags`), e.g. `max_seq_length=384`."""
    define_shared_flags(
        "vocab_file",
        "do_lower_case",
        "bert_config_file",
        "init_checkpoint",
        "output_dir",
        "do_train",
        "do_eval",
        "max_seq_length",
        "train_batch_size",
        "eval_batch_size",
        "learning_rate",
        "save_checkpoints_steps",
        "iterations_per_loop",
        "export_dir",
        "random_seed",
        **defaults,
    )
    flags.DEFINE_string("data_dir", None, "The task's data directory.")
    flags.DEFINE_bool("do_predict", False, "Whether to write predictions for the test set(s).")
    flags.DEFINE_integer("predict_batch_size", 8, "Predict batch size.", lower_bound=1)
    flags.DEFINE_float("num_train_epochs", 3.0, "Training epochs (may be fractional).")
    flags.DEFINE_float(
        "warmup_proportion",
        0.1,
        "Fraction of the training steps with linear warmup.",
        lower_bound=0.0,
        upper_bound=1.0,
    )
    flags.DEFINE_bool(
        "google_bert_optimizer",
        False,
        "Fine-tune with google-research/bert's AdamW epsilon, 1e-6, and its decay, "
        "a line from the peak at step 0, so that warmup ends below the peak. "
        "Default: epsilon 1e-8 and a decay from the peak at the end of warmup, as in "
        "Hugging Face transformers, which learn faster.",
    )
    flags.DEFINE_enum(
        "head_initializer",
        "normal",
        HEAD_INITIALIZERS,
        "The task head's initial weights: normal with the config's initializer_range as its "
        "standard deviation, as in Hugging Face transformers, or truncated_normal, "
        "google-research/bert's, which spreads 0.88x as wide and learns more slowly at first.",
    )
    flags.DEFINE_float(
        "layerwise_lr_decay",
        1.0,
        "Discriminative fine-tuning: each layer below the top gets this factor on its "
        "learning rate (1 = off; 0.9 to 0.95 are common).",
        lower_bound=0.0,
        upper_bound=1.0,
    )
    flags.DEFINE_float(
        "label_smoothing",
        0.0,
        "Label smoothing of the classification losses.",
        lower_bound=0.0,
        upper_bound=1.0,
    )
    flags.DEFINE_bool(
        "gradual_unfreezing",
        False,
        "Unfreeze the layers top down, evenly over the first epoch (ULMFiT).",
    )
    flags.DEFINE_float(
        "mlm_aux_weight",
        0.0,
        "Weight of an auxiliary masked-LM loss on the task's own text (0 = off), "
        "against catastrophic forgetting.",
        lower_bound=0.0,
    )
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
            if flag_values[file_flag].value is None and any(
                flag_values[name].value for name in do_flags
            ):
                raise flags.ValidationError(f"--data_dir is required without --{file_flag}")
    for name in REQUIRED:
        if flag_values[name].value is None:
            raise flags.ValidationError(f"--{name} is required")
