"""The data scripts' mains: create_pretraining_data.py, create_vocab.py, data/fetch_public_data.py.

A script defines its flags (`bert_tf.data.flags`) and runs its `*_main` with
`bert_tf.script.run`. A bad flag or input ends in one line, `<script>: error:
<message>`, and exit status 1; so do arguments that are not flags.
"""

from __future__ import annotations

import functools
import gc

from absl import flags

from bert_tf.cli_errors import naming_output_flag, reject_arguments, run_reporting_user_errors
from bert_tf.corpora import fetch_uncased_vocab, fetch_wikipedia_sample
from bert_tf.data import corpus, vocab_learner
from bert_tf.data import pretraining_data_generator as generator

FLAGS = flags.FLAGS


def create_pretraining_data(flag_values: flags.FlagValues = FLAGS) -> generator.Statistics:
    """Writes the pretraining TFRecords that the flags describe; returns their statistics."""
    fv = flag_values
    options = generator.PretrainingDataOptions(
        vocab_file=fv.vocab_file,
        do_lower_case=fv.do_lower_case,
        do_whole_word_mask=fv.do_whole_word_mask,
        word_segmenter=fv.word_segmenter,
        max_seq_length=fv.max_seq_length,
        max_predictions_per_seq=fv.max_predictions_per_seq,
        random_seed=fv.random_seed,
        dupe_factor=fv.dupe_factor,
        masked_lm_prob=fv.masked_lm_prob,
        short_seq_prob=fv.short_seq_prob,
        next_sentence_prediction=fv.next_sentence_prediction,
    )
    with naming_output_flag("output_file", fv.output_file):
        return generator.create_pretraining_data(
            corpus.expand_input_files(fv.input_file),
            generator.output_paths(fv.output_file, fv.num_output_shards),
            options,
            num_workers=fv.num_workers,
            chunk_bytes=max(1, int(fv.chunk_mb * 2**20)),
            bert_config_file=fv.bert_config_file,
        )


def _create_pretraining_data_main(argv, flag_values: flags.FlagValues) -> None:
    reject_arguments(argv)
    print(create_pretraining_data(flag_values).summary(flag_values.next_sentence_prediction))
    gc.freeze()  # Exit without the final collections over TensorFlow's objects.


def create_pretraining_data_main(argv, flag_values: flags.FlagValues = FLAGS) -> None:
    """create_pretraining_data.py: writes the records and prints their statistics."""
    main = functools.partial(_create_pretraining_data_main, flag_values=flag_values)
    run_reporting_user_errors(main, argv, flag_values)


def _create_vocab_main(argv, flag_values: flags.FlagValues) -> None:
    reject_arguments(argv)
    fv = flag_values
    with naming_output_flag("output_file", fv.output_file):
        tokens = vocab_learner.create_vocab(
            fv.input_file,
            fv.output_file,
            fv.vocab_size,
            fv.do_lower_case,
            fv.num_unused,
            fv.keep_cjk_suffix_pieces,
        )
    print(f"Wrote {len(tokens)} tokens to {fv.output_file}")


def create_vocab_main(argv, flag_values: flags.FlagValues = FLAGS) -> None:
    """create_vocab.py: learns the WordPiece vocab of the corpus and writes it."""
    main = functools.partial(_create_vocab_main, flag_values=flag_values)
    run_reporting_user_errors(main, argv, flag_values)


def _fetch_public_data_main(argv) -> None:
    reject_arguments(argv)
    print(f"wikipedia_sample\t{fetch_wikipedia_sample()}")
    print(f"uncased_vocab\t{fetch_uncased_vocab()}")


def fetch_public_data_main(argv) -> None:
    """data/fetch_public_data.py: fetches the sample corpus and vocab to the cache; prints paths."""
    run_reporting_user_errors(_fetch_public_data_main, argv)
