"""Learn a BERT WordPiece `vocab.txt` from a text corpus.

    python create_vocab.py --input_file='corpus/*.txt' --output_file=vocab.txt \
        --vocab_size=30522 --do_lower_case=true --num_unused=100

The reserved tokens `[PAD] [UNK] [CLS] [SEP] [MASK]` come first, then
`--num_unused` `[unusedN]` slots, then the learned pieces. The logic is in
`bert_tf/data/vocab_learner.py`, the main in `bert_tf/data/cli.py`.
"""

from absl import app

from bert_tf.cli_help import list_flags_in_help
from bert_tf.data import cli

if __name__ == "__main__":
    cli.define_create_vocab_flags()
    list_flags_in_help()
    app.run(cli.create_vocab_main)
