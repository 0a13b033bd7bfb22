"""Learn a BERT WordPiece `vocab.txt` from a text corpus.

    python create_vocab.py --input_file='corpus/*.txt' --output_file=vocab.txt \
        --vocab_size=30522 --do_lower_case=true --num_unused=100

The reserved tokens `[PAD] [UNK] [CLS] [SEP] [MASK]` come first, then
`--num_unused` `[unusedN]` slots, then the learned pieces. The logic is in
`bert_tf/tokenization/vocab_learner.py`.
"""

from absl import app, flags

from bert_tf.cli_errors import run_reporting_user_errors
from bert_tf.tokenization import vocab_learner

flags.DEFINE_string("input_file", None, "Comma-separated list of corpus globs (UTF-8 text).")
flags.DEFINE_string("output_file", None, "The vocab.txt to write (atomically).")
flags.DEFINE_integer("vocab_size", 30522, "Largest vocab size, reserved tokens included.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents, as an uncased BERT.")
flags.DEFINE_integer("num_unused", 0, "Number of [unusedN] slots after the special tokens.", lower_bound=0)
flags.mark_flags_as_required(["input_file", "output_file"])
FLAGS = flags.FLAGS


def _main(argv):
    if len(argv) > 1:
        raise flags.Error(f"unexpected arguments: {' '.join(argv[1:])}")
    tokens = vocab_learner.create_vocab(FLAGS.input_file, FLAGS.output_file, FLAGS.vocab_size,
                                        FLAGS.do_lower_case, FLAGS.num_unused)
    print(f"Wrote {len(tokens)} tokens to {FLAGS.output_file}")


def main(argv):
    run_reporting_user_errors(_main, argv)


if __name__ == "__main__":
    app.run(main)
