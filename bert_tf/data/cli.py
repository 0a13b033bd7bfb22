"""The mains of the data scripts: create_pretraining_data.py, create_vocab.py and data/fetch_public_data.py.

A script defines its flags (`define_*_flags`) and runs its `*_main` with
`absl.app.run`. A bad flag or input ends in one line, `<script>: error:
<message>`, and exit status 1; so do arguments that are not flags.
"""

from __future__ import annotations

import functools
import gc
import os

from absl import flags

from bert_tf.cli_errors import reject_arguments, run_reporting_user_errors
from bert_tf.data import corpus
from bert_tf.data import pretraining_data_generator as generator
from bert_tf.datasets import fetch_uncased_vocab, fetch_wikipedia_sample
from bert_tf.data import vocab_learner

FLAGS = flags.FLAGS


def define_create_pretraining_data_flags(flag_values: flags.FlagValues = FLAGS) -> None:
    """google-research/bert's flags and defaults, plus the parallel run's and the sharding's."""
    define = dict(flag_values=flag_values)
    flags.DEFINE_string("input_file", None, "Input text files: comma-separated list of globs.", **define)
    flags.DEFINE_string("output_file", None, "Output TFRecord files: comma-separated list, or one prefix "
                        "with --num_output_shards.", **define)
    flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.", **define)
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the text (uncased models).", **define)
    flags.DEFINE_bool("do_whole_word_mask", False, "Mask whole words (a token and its ## pieces).", **define)
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
    flags.DEFINE_float("chunk_mb", 4.0, "Inputs are processed in chunks of about this many MB of whole "
                       "documents; random next sentences come from the same chunk.", **define)
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"], **define)


def create_pretraining_data(flag_values: flags.FlagValues = FLAGS) -> generator.Statistics:
    """Writes the pretraining TFRecords that the flags describe; returns their statistics."""
    fv = flag_values
    options = generator.PretrainingDataOptions(
        vocab_file=fv.vocab_file, do_lower_case=fv.do_lower_case, do_whole_word_mask=fv.do_whole_word_mask,
        max_seq_length=fv.max_seq_length, max_predictions_per_seq=fv.max_predictions_per_seq,
        random_seed=fv.random_seed, dupe_factor=fv.dupe_factor, masked_lm_prob=fv.masked_lm_prob,
        short_seq_prob=fv.short_seq_prob)
    return generator.create_pretraining_data(
        corpus.expand_input_files(fv.input_file), generator.output_paths(fv.output_file, fv.num_output_shards),
        options, num_workers=fv.num_workers, chunk_bytes=max(1, int(fv.chunk_mb * 2**20)),
        bert_config_file=fv.bert_config_file)


def _create_pretraining_data_main(argv, flag_values: flags.FlagValues) -> None:
    reject_arguments(argv)
    print(create_pretraining_data(flag_values).summary())
    gc.freeze()  # Exit without the final collections over TensorFlow's objects (about 0.7 s).


def create_pretraining_data_main(argv, flag_values: flags.FlagValues = FLAGS) -> None:
    """create_pretraining_data.py: writes the records and prints their statistics."""
    run_reporting_user_errors(functools.partial(_create_pretraining_data_main, flag_values=flag_values), argv)


def define_create_vocab_flags(flag_values: flags.FlagValues = FLAGS) -> None:
    """The corpus, the output and the vocab's size and casing."""
    define = dict(flag_values=flag_values)
    flags.DEFINE_string("input_file", None, "Comma-separated list of corpus globs (UTF-8 text).", **define)
    flags.DEFINE_string("output_file", None, "The vocab.txt to write (atomically).", **define)
    flags.DEFINE_integer("vocab_size", 30522, "Largest vocab size, reserved tokens included.", **define)
    flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents, as an uncased BERT.", **define)
    flags.DEFINE_integer("num_unused", 0, "Number of [unusedN] slots after the special tokens.", lower_bound=0,
                         **define)
    flags.mark_flags_as_required(["input_file", "output_file"], **define)


def _create_vocab_main(argv, flag_values: flags.FlagValues) -> None:
    reject_arguments(argv)
    fv = flag_values
    tokens = vocab_learner.create_vocab(fv.input_file, fv.output_file, fv.vocab_size, fv.do_lower_case,
                                        fv.num_unused)
    print(f"Wrote {len(tokens)} tokens to {fv.output_file}")


def create_vocab_main(argv, flag_values: flags.FlagValues = FLAGS) -> None:
    """create_vocab.py: learns the WordPiece vocab of the corpus and writes it."""
    run_reporting_user_errors(functools.partial(_create_vocab_main, flag_values=flag_values), argv)


def _fetch_public_data_main(argv) -> None:
    reject_arguments(argv)
    print(f"wikipedia_sample\t{fetch_wikipedia_sample()}")
    print(f"uncased_vocab\t{fetch_uncased_vocab()}")


def fetch_public_data_main(argv) -> None:
    """data/fetch_public_data.py: fetches the sample corpus and vocab into the cache; prints their paths."""
    run_reporting_user_errors(_fetch_public_data_main, argv)
