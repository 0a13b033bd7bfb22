"""pytest set-up shared by all tests: quiet TensorFlow, Keras 3 on the TF backend, public data fixtures."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"


@pytest.fixture(scope="session")
def uncased_vocab_file() -> str:
    """The path of the real bert-base-uncased `vocab.txt`."""
    from bert_tf.datasets import fetch_uncased_vocab

    return str(fetch_uncased_vocab())


@pytest.fixture(scope="session")
def wikipedia_sample_lines() -> tuple[str, ...]:
    """The public Wikipedia sample's lines: one sentence a line, "" between documents (and last)."""
    from bert_tf.datasets import fetch_wikipedia_sample

    return tuple(fetch_wikipedia_sample().read_text(encoding="utf-8").split("\n"))
