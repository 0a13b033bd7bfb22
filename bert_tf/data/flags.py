"""The flags of the data scripts: create_pretraining_data.py's and create_vocab.py's.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

import os

from absl import flags

from bert_tf.shared_flags import define_shared_flags


def define_create_pretraining_data_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """google-research/bert's flags and defaults, plus the parallel run's and the sharding's."""
    define = dict(flag_values=flag_values)
    define_shared_flags(
        "input_file",
        "output_file",
        "vocab_file",
        "do_lower_case",
        "do_whole_word_mask",
        "word_segmenter",
        "next_sentence_prediction",
        "max_seq_length",
        "max_predictions_per_seq",
        "random_seed",
        **define,
    )
    flags.DEFINE_integer(
        "dupe_factor", 10, "Passes over the input, each with different masks.", **define
    )
    flags.DEFINE_float("masked_lm_prob", 0.15, "Masked-LM probability.", **define)
    flags.DEFINE_float(
        "short_seq_prob", 0.1, "Probability of a shorter target sequence length.", **define
    )
    flags.DEFINE_integer(
        "num_workers",
        os.cpu_count(),
        "Worker processes (the output does not depend on it).",
        **define,
    )
    flags.DEFINE_integer(
        "num_output_shards",
        None,
        "With a single --output_file: write this many shards named {output_file}-00000-of-0000N.",
        **define,
    )
    define_shared_flags("bert_config_file", **define)
    flags.DEFINE_float(
        "chunk_mb",
        4.0,
        "The corpus is processed in chunks of about this many MB of whole "
        "documents, across files; random next sentences come from the same chunk.",
        **define,
    )
    flags.register_validator("chunk_mb", lambda mb: mb > 0, "--chunk_mb must be above 0", **define)
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"], **define)


def define_create_vocab_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """The corpus, the output and the vocab's size and casing."""
    define = dict(flag_values=flag_values)
    define_shared_flags("input_file", "output_file", **define)
    flags.DEFINE_integer(
        "vocab_size", 30522, "Largest vocab size, reserved tokens included.", **define
    )
    define_shared_flags("do_lower_case", **define)
    flags.DEFINE_integer(
        "num_unused",
        0,
        "Number of [unusedN] slots after the special tokens.",
        lower_bound=0,
        **define,
    )
    flags.DEFINE_bool(
        "keep_cjk_suffix_pieces",
        False,
        "Also keep a ## copy of each CJK character (the "
        "tokenizer makes every CJK character a word of its own, so it never uses them).",
        **define,
    )
    flags.mark_flags_as_required(["input_file", "output_file"], **define)
