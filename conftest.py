"""pytest set-up shared by all tests: quiet TensorFlow, Keras 3 on the TF backend, public data
fixtures, and the slowest tests scheduled first."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: runs for half a minute or more on 2 cores; scheduled first"
    )


def pytest_collection_modifyitems(items):
    """The `slow` tests first (the order is otherwise kept): with `pytest -n 2`, a long test
    started last would leave the other worker idle until it ends."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def uncased_vocab_file() -> str:
    """The path of the real bert-base-uncased `vocab.txt`."""
    from bert_tf.corpora import fetch_uncased_vocab

    return str(fetch_uncased_vocab())


@pytest.fixture(scope="session")
def wikipedia_sample_lines() -> tuple[str, ...]:
    """The public Wikipedia sample's lines: one sentence a line, "" between documents (and last)."""
    from bert_tf.corpora import fetch_wikipedia_sample

    return tuple(fetch_wikipedia_sample().read_text(encoding="utf-8").split("\n"))
