"""The flags that more than one script takes, each defined here once, with one help text.

A script's flag module defines the ones it takes with `define_shared_flags`. Where a script
has a default of its own (run_squad.py's max_seq_length, google-research/bert's), it passes
it there, and the flag's help text says so. Like every flag module, this one imports no
TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from absl import flags

from bert_tf.training.runtime_choices import DTYPE_POLICIES, STRATEGIES


@dataclasses.dataclass(frozen=True)
class SharedFlag:
    """One flag: its absl `DEFINE_*` function, default, help text, and further arguments
    (`lower_bound`, `enum_values`)."""

    define: Callable[..., Any]
    default: Any
    help: str
    arguments: dict[str, Any] = dataclasses.field(default_factory=dict)


SHARED_FLAGS = {
    # The model, its vocab and its checkpoint.
    "bert_config_file": SharedFlag(
        flags.DEFINE_string,
        None,
        "The model's bert_config.json. Default: the config stored with the checkpoint "
        "(--init_checkpoint; convert_checkpoint.py's --input_checkpoint); run_pretraining.py "
        "first takes the one of the --output_dir it resumes, and its embedded demo configs/tiny. "
        "create_pretraining_data.py reads its max_position_embeddings, which allows a "
        "--max_seq_length above 512.",
    ),
    "vocab_file": SharedFlag(
        flags.DEFINE_string,
        None,
        "The WordPiece vocab.txt the model was pretrained with. Fine-tuning defaults to a TF Hub "
        "--init_checkpoint's assets/vocab.txt; export_model.py stores it in the export as an "
        "asset; run_pretraining.py reads it with --dynamic_masking and in the embedded demo.",
    ),
    "do_lower_case": SharedFlag(
        flags.DEFINE_bool,
        True,
        "Lower-case the text and strip its accents (uncased models). run_pretraining.py reads it "
        "with --dynamic_masking and in the embedded demo.",
    ),
    "init_checkpoint": SharedFlag(
        flags.DEFINE_string,
        None,
        "The checkpoint to start from: Google TF1, Model Garden TF2, Hugging Face or bert_tf; "
        "extract_features.py also reads a .keras file, and fine-tuning a TF Hub encoder "
        "SavedModel (whose recorded do_lower_case is then the default). run_pretraining.py reads "
        "it only while --output_dir holds no checkpoint yet.",
    ),
    # Inputs and outputs.
    "input_file": SharedFlag(
        flags.DEFINE_string,
        None,
        "The input, comma-separated globs: UTF-8 text for create_pretraining_data.py and "
        "create_vocab.py; pretraining TFRecords for run_pretraining.py (text with "
        "--dynamic_masking; without it and --output_dir, the embedded demo fetches the public "
        "Wikipedia sample and builds them; an eval-only run with --eval_file needs none); for "
        "extract_features.py, one text a line: `text` or `text_a ||| text_b`.",
    ),
    "output_file": SharedFlag(
        flags.DEFINE_string,
        None,
        "The output: create_pretraining_data.py's TFRecord files (comma-separated, or one prefix "
        "with --num_output_shards); create_vocab.py's vocab.txt and extract_features.py's JSON "
        "lines, each written atomically.",
    ),
    "output_dir": SharedFlag(
        flags.DEFINE_string,
        None,
        "A run's checkpoints and eval_results.txt, with run_pretraining.py's TensorBoard logs and "
        "fine-tuning's predictions. convert_checkpoint.py writes bert_config.json, vocab.txt and "
        "the checkpoint there: a new directory, or an earlier conversion's, which is replaced.",
    ),
    "export_dir": SharedFlag(
        flags.DEFINE_string,
        None,
        "Where the SavedModel goes: export_model.py's output; fine-tuning exports the fine-tuned "
        "model there when given.",
    ),
    # Sequences.
    "max_seq_length": SharedFlag(
        flags.DEFINE_integer,
        128,
        "Maximum WordPiece tokens per sequence, [CLS] and [SEP] included: the length of the "
        "pretraining records; for export_model.py, of the text signatures' packed input (at "
        "least 4, or 3 for --model_type=token, which packs one text). Default 128; run_squad.py's "
        "384, google-research/bert's.",
        dict(lower_bound=3),
    ),
    "max_predictions_per_seq": SharedFlag(
        flags.DEFINE_integer,
        20,
        "Masked-LM predictions per sequence at most: the records' masked positions.",
        dict(lower_bound=1),
    ),
    "do_whole_word_mask": SharedFlag(
        flags.DEFINE_bool,
        False,
        "Mask whole words (a token and its ## pieces). In run_pretraining.py, with "
        "--dynamic_masking (records are masked when written).",
    ),
    "word_segmenter": SharedFlag(
        flags.DEFINE_enum,
        "none",
        "With --do_whole_word_mask: segment Chinese text into words with this segmenter, and mask "
        "all the characters of a word together (rjieba is jieba in Rust).",
        dict(enum_values=["none", "jieba", "rjieba"]),
    ),
    "next_sentence_prediction": SharedFlag(
        flags.DEFINE_bool,
        True,
        "Sentence pairs for next-sentence prediction (BERT). False: contiguous full-length text "
        "packed across sentences and documents, with no next-sentence labels or head (RoBERTa's "
        "FULL-SENTENCES). run_pretraining.py's must match the data's.",
    ),
    # SQuAD's windows and answer spans: run_squad.py's, and export_model.py's --model_type=span.
    "version_2_with_negative": SharedFlag(
        flags.DEFINE_bool, False, "SQuAD 2.0: some questions have no answer in the context."
    ),
    "doc_stride": SharedFlag(
        flags.DEFINE_integer,
        128,
        "Tokens between the starts of a long context's windows.",
        dict(lower_bound=1),
    ),
    "max_query_length": SharedFlag(
        flags.DEFINE_integer,
        64,
        "Question tokens kept; longer questions are cut.",
        dict(lower_bound=1),
    ),
    "max_answer_length": SharedFlag(
        flags.DEFINE_integer, 30, "Longest answer, in WordPiece tokens.", dict(lower_bound=1)
    ),
    "n_best_size": SharedFlag(
        flags.DEFINE_integer,
        20,
        "The top start and top end tokens of each window that make the candidate answer spans, "
        "and the candidates per question in nbest_predictions.json.",
        dict(lower_bound=1),
    ),
    "null_score_diff_threshold": SharedFlag(
        flags.DEFINE_float,
        0.0,
        'SQuAD 2.0: answer "" when the null score beats the best span by more than this.',
    ),
    # Training.
    "do_train": SharedFlag(flags.DEFINE_bool, False, "Whether to train (pretrain or fine-tune)."),
    "do_eval": SharedFlag(
        flags.DEFINE_bool,
        False,
        "Whether to evaluate: on the dev set(s), or run_pretraining.py's --eval_file.",
    ),
    "train_batch_size": SharedFlag(
        flags.DEFINE_integer,
        32,
        "Global training batch size. Default 32; run_multiple_choice.py's 16, the paper's SWAG "
        "run.",
        dict(lower_bound=1),
    ),
    "eval_batch_size": SharedFlag(
        flags.DEFINE_integer, 8, "Global eval batch size.", dict(lower_bound=1)
    ),
    "learning_rate": SharedFlag(
        flags.DEFINE_float,
        5e-5,
        "Peak learning rate (of AdamW, or run_pretraining.py's --optimizer). Default 5e-5; "
        "run_multiple_choice.py's 2e-5, the paper's SWAG run.",
        dict(lower_bound=0.0),
    ),
    "save_checkpoints_steps": SharedFlag(
        flags.DEFINE_integer,
        None,
        "Checkpoint every this many steps: run_pretraining.py's checkpoints (default 1000, "
        "google-research/bert's). Fine-tuning backs up the training state to output_dir/backup "
        "(default: at each epoch's end only), so that a killed run loses at most this many steps "
        "when started again.",
        dict(lower_bound=1),
    ),
    "iterations_per_loop": SharedFlag(
        flags.DEFINE_integer,
        1,
        "Training steps per host call (one tf.function running a loop of steps, as Keras's "
        "steps_per_execution): fewer host round trips, the same weights. Default 1: with more, "
        "fine-tuning's --save_checkpoints_steps backup waits for the end of the call that reaches "
        "its step, and a multi-replica strategy other than tpu is refused. run_pretraining.py's "
        "default is google-research/bert's 1000, and its calls also end at each multiple of "
        "--log_every and --save_checkpoints_steps.",
        dict(lower_bound=1),
    ),
    "random_seed": SharedFlag(
        flags.DEFINE_integer,
        12345,
        "Random seed: of the data generation, or of initialisation, shuffling and dropout.",
        dict(lower_bound=0),
    ),
    # Distribution and precision (google-research/bert's TPU flags, plus tf.distribute's).
    "distribution_strategy": SharedFlag(
        flags.DEFINE_enum,
        "default",
        "tf.distribute strategy. --tpu implies tpu.",
        dict(enum_values=list(STRATEGIES)),
    ),
    "use_tpu": SharedFlag(
        flags.DEFINE_bool,
        False,
        "Whether to use a TPU (needs --tpu_name or --master, which imply it). --use_tpu=false, "
        "given explicitly, ignores them (google-research/bert's behaviour). extract_features.py "
        "accepts it, but computes on this machine's CPU or GPU (a warning says so).",
    ),
    "tpu_name": SharedFlag(
        flags.DEFINE_string,
        None,
        "The TPU to use: local (the TPUs of this TPU VM), a Cloud TPU name (a pod slice's hosts "
        "are looked up in --tpu_zone/--gcp_project), or grpc:// addresses, one per host, "
        "comma-separated.",
    ),
    "master": SharedFlag(
        flags.DEFINE_string,
        None,
        "google-research/bert's TensorFlow master: the TPU's grpc:// address "
        "(grpc://10.0.0.2:8470). Used as --tpu_name when that is unset (a --tpu_name wins, as in "
        "google's scripts), so it too implies the tpu strategy. extract_features.py accepts it, "
        "but ignores it as --use_tpu (with a warning).",
    ),
    "num_tpu_cores": SharedFlag(
        flags.DEFINE_integer,
        None,
        "google-research/bert's total number of TPU cores. Only used with a TPU, which the "
        "strategy uses whole: a number other than its cores is refused. Default: not checked. "
        "extract_features.py accepts it, unused.",
        dict(lower_bound=1),
    ),
    "tpu_zone": SharedFlag(
        flags.DEFINE_string,
        None,
        "GCE zone of the Cloud TPU (used to resolve --tpu_name; default: this VM's).",
    ),
    "gcp_project": SharedFlag(
        flags.DEFINE_string,
        None,
        "GCP project of the Cloud TPU (used to resolve --tpu_name; default: this VM's).",
    ),
    "tpu_timeout": SharedFlag(
        flags.DEFINE_float, 120.0, "Seconds to wait for the TPU before failing."
    ),
    "dtype": SharedFlag(
        flags.DEFINE_enum,
        "float32",
        "Compute precision: a Keras mixed-precision policy for bfloat16 and float16 (training "
        "adds dynamic loss scaling to float16). export_model.py also stores the weights in it, "
        "with LayerNorm and the attention softmax in float32: bfloat16 halves the SavedModel and "
        "is faster on CPUs with AVX512_BF16 or AMX.",
        dict(enum_values=list(DTYPE_POLICIES)),
    ),
    "jit_compile": SharedFlag(
        flags.DEFINE_bool,
        False,
        "Compile with XLA: the train step (TPUs always do), or export_model.py's serving_default "
        "(faster on CPU; TF Serving then needs --xla_cpu_compilation_enabled; task models only).",
    ),
}
TPU_FLAGS = (
    "use_tpu",
    "tpu_name",
    "master",
    "num_tpu_cores",
    "tpu_zone",
    "gcp_project",
    "tpu_timeout",
)
SPAN_FLAGS = (
    "version_2_with_negative",
    "doc_stride",
    "max_query_length",
    "max_answer_length",
    "n_best_size",
    "null_score_diff_threshold",
)


def define_shared_flags(
    *names: str, flag_values: flags.FlagValues = flags.FLAGS, **defaults: Any
) -> None:
    """Defines the shared flags `names`.

    Args:
      *names: keys of `SHARED_FLAGS`.
      flag_values: the registry to define them in.
      **defaults: a script's own default for some of them, as its help text names it.
    """
    unknown = set(defaults) - set(names)
    if unknown:
        raise ValueError(f"defaults for flags not defined here: {', '.join(sorted(unknown))}")
    for name in names:
        flag = SHARED_FLAGS[name]
        flag.define(
            name,
            defaults.get(name, flag.default),
            help=flag.help,
            flag_values=flag_values,
            **flag.arguments,
        )
