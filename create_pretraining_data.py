"""Masked-LM + next-sentence pretraining TFRecords from text, with google-research/bert's flags.

Example:
  python create_pretraining_data.py --input_file=corpus/*.txt \
    --output_file=output/pretrain.tfrecord --num_output_shards=8 \
    --vocab_file=vocab.txt --max_seq_length=128 --max_predictions_per_seq=20 --dupe_factor=10
"""

import gc
import os
import sys

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", None, "Input text files: comma-separated list of globs.")
flags.DEFINE_string("output_file", None, "Output TFRecord files: comma-separated list, or one prefix "
                    "with --num_output_shards.")
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab.txt.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text (uncased models).")
flags.DEFINE_bool("do_whole_word_mask", False, "Mask whole words (a token and its ## pieces).")
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum number of masked-LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer("dupe_factor", 10, "Passes over the input, each with different masks.")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked-LM probability.")
flags.DEFINE_float("short_seq_prob", 0.1, "Probability of a shorter target sequence length.")
flags.DEFINE_integer("num_workers", os.cpu_count(), "Worker processes (the output does not depend on it).")
flags.DEFINE_integer("num_output_shards", None, "With a single --output_file: write this many shards "
                     "named {output_file}-00000-of-0000N.")
flags.DEFINE_string("bert_config_file", None, "The model's bert_config.json: allows --max_seq_length "
                    "above 512, up to its max_position_embeddings.")
flags.DEFINE_float("chunk_mb", 4.0, "Inputs are processed in chunks of about this many MB of whole "
                     "documents; random next sentences come from the same chunk.")
flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"])


def main(argv):
    del argv
    # Imported here so that --help answers at once; without garbage collections meanwhile,
    # which would walk TensorFlow's growing object graph over and over.
    gc.disable()
    from bert_tf.bert_config import ConfigError
    from bert_tf.data import corpus, pretraining_data_generator as generator
    from bert_tf.tokenization import VocabError
    gc.enable()

    try:
        options = generator.PretrainingDataOptions(
            vocab_file=FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case,
            do_whole_word_mask=FLAGS.do_whole_word_mask, max_seq_length=FLAGS.max_seq_length,
            max_predictions_per_seq=FLAGS.max_predictions_per_seq, random_seed=FLAGS.random_seed,
            dupe_factor=FLAGS.dupe_factor, masked_lm_prob=FLAGS.masked_lm_prob,
            short_seq_prob=FLAGS.short_seq_prob)
        stats = generator.create_pretraining_data(
            corpus.expand_input_files(FLAGS.input_file),
            generator.output_paths(FLAGS.output_file, FLAGS.num_output_shards), options,
            num_workers=FLAGS.num_workers, chunk_bytes=max(1, int(FLAGS.chunk_mb * 2**20)),
            bert_config_file=FLAGS.bert_config_file)
    except (generator.PretrainingDataError, corpus.CorpusError, VocabError, ConfigError) as e:
        print(f"create_pretraining_data.py: error: {e}", file=sys.stderr)
        sys.exit(1)
    print(stats.summary())
    gc.freeze()  # Exit without the final collections over TensorFlow's objects (about 0.7 s).


if __name__ == "__main__":
    app.run(main)
