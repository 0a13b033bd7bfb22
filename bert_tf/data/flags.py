"""The flags of the data scripts: create_pretraining_data.py's and create_vocab.py's.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

import os

from absl import flags


def define_whole_word_mask_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """--do_whole_word_mask, and --word_segmenter for whole-word masking of Chinese."""
    flags.DEFINE_bool("do_whole_word_mask", False, "Mask whole words (a token and its ## pieces). In "
                      "run_pretraining.py, with --dynamic_masking (records are masked when written).",
                      flag_values=flag_values)
    flags.DEFINE_enum("word_segmenter", "none", ["none", "jieba", "rjieba"],
                      "With --do_whole_word_mask: segment Chinese text into words with this segmenter, and "
                      "mask all the characters of a word together (rjieba is jieba in Rust).",
                      flag_values=flag_values)


def define_create_pretraining_data_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """google-research/bert's flags and defaults, plus the parallel run's and the sharding's."""
    define = dict(flag_values=flag_values)
    flags.DEFINE_string("input_file", None, "Input text files: comma-separated list of globs.", **define)
    flags.DEFINE_string("output_file", None, "Output TFRecord files: comma-separated list, or one prefix "
                        "with --num_output_shards.", **define)
    flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", **define)
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the text (uncased models).", **define)
    define_whole_word_mask_flags(flag_values)
    flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.", **define)
    flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum number of masked-LM predictions per sequence.",
                         **define)
    flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.", lower_bound=0, **define)
    flags.DEFINE_integer("dupe_factor", 10, "Passes over the input, each with different masks.", **define)
    flags.DEFINE_float("masked_lm_prob", 0.15, "Masked-LM probability.", **define)
    flags.DEFINE_float("short_seq_prob", 0.1, "Probability of a shorter target sequence length.", **define)
    flags.DEFINE_integer("num_workers", os.cpu_count(), "Worker processes (the output does not depend on it).",
                         **define)
    flags.DEFINE_integer("num_output_shards", None, "With a single --output_file: write this many shards "
                         "named {output_file}-00000-of-0000N.", **define)
    flags.DEFINE_string("bert_config_file", None, "The model's bert_config.json: allows --max_seq_length "
                        "above 512, up to its max_position_embeddings.", **define)
    flags.DEFINE_float("chunk_mb", 4.0, "The corpus is processed in chunks of about this many MB of whole "
                       "documents, across files; random next sentences come from the same chunk.", **define)
    flags.register_validator("chunk_mb", lambda mb: mb > 0, "--chunk_mb must be above 0", **define)
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"], **define)


def define_create_vocab_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """The corpus, the output and the vocab's size and casing."""
    define = dict(flag_values=flag_values)
    flags.DEFINE_string("input_file", None, "Comma-separated list of corpus globs (UTF-8 text).", **define)
    flags.DEFINE_string("output_file", None, "The vocab.txt to write (atomically).", **define)
    flags.DEFINE_integer("vocab_size", 30522, "Largest vocab size, reserved tokens included.", **define)
    flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents, as an uncased BERT.", **define)
    flags.DEFINE_integer("num_unused", 0, "Number of [unusedN] slots after the special tokens.", lower_bound=0,
                         **define)
    flags.DEFINE_bool("keep_cjk_suffix_pieces", False, "Also keep a ## copy of each CJK character (the "
                      "tokenizer makes every CJK character a word of its own, so it never uses them).", **define)
    flags.mark_flags_as_required(["input_file", "output_file"], **define)
