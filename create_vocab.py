"""Learn a BERT WordPiece `vocab.txt` from a text corpus.

    python create_vocab.py --input_file='corpus/*.txt' --output_file=vocab.txt \
        --vocab_size=30522 --do_lower_case=true --num_unused=100

The reserved tokens `[PAD] [UNK] [CLS] [SEP] [MASK]` come first, then
`--num_unused` `[unusedN]` slots, then the learned pieces. The logic is in
`bert_tf/data/vocab_learner.py`, the main in `bert_tf/data/cli.py`.
"""

from bert_tf import script
from bert_tf.data.flags import define_create_vocab_flags

if __name__ == "__main__":
    define_create_vocab_flags()
    script.run("bert_tf.data.cli:create_vocab_main")
