"""MediaWiki dump -> plain-text documents of sentences (the pretraining corpus format)."""

from __future__ import annotations

import html
import io
import re
import xml.etree.ElementTree as ET

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>", re.S | re.I)
_BLOCK_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|pre|score)[^>]*>.*?</\1>", re.S | re.I
)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_FILE_LINK = re.compile(
    r"\[\[(?:File|Image|Category|[a-z]{2,3}(?:-[a-z]+)?):[^\[\]]*(?:\[\[[^\]]*\]\][^\[\]]*)*\]\]",
    re.I,
)
_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_EXTERNAL_LINK = re.compile(r"\[(?:https?|ftp)://[^\s\]]+\s*([^\]]*)\]")
_BARE_URL = re.compile(r"https?://\S+")
_EMPHASIS = re.compile(r"'{2,}")
_HEADING = re.compile(r"^=+\s*(.*?)\s*=+\s*$")
_LIST_MARK = re.compile(r"^[*#:;]+\s*")
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
_SPACES = re.compile(r"[ \t\u00a0]+")
# Short lowercase-free abbreviations that end with a period but not a sentence.
_ABBREVIATIONS = (
    "Mr.",
    "Mrs.",
    "Ms.",
    "Dr.",
    "St.",
    "Jr.",
    "Sr.",
    "Prof.",
    "Gen.",
    "Col.",
    "Lt.",
    "No.",
    "vs.",
    "e.g.",
    "i.e.",
    "c.",
    "ca.",
    "Vol.",
    "pp.",
    "U.S.",
    "U.K.",
)


def _strip_nested(text: str, opening: str, closing: str) -> str:
    """Removes balanced `opening ... closing` spans (templates, tables), nested or not."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith(opening, i):
            depth += 1
            i += len(opening)
        elif depth and text.startswith(closing, i):
            depth -= 1
            i += len(closing)
        else:
            if not depth:
                out.append(text[i])
            i += 1
    return "".join(out)


def strip_markup(wikitext: str) -> str:
    """Plain text of an article: templates, tables, refs, files, tags and emphasis removed."""
    text = _COMMENT.sub("", wikitext)
    text = _REF.sub("", text)
    text = _BLOCK_TAGS.sub("", text)
    text = _strip_nested(text, "{{", "}}")
    text = _strip_nested(text, "{|", "|}")
    text = _FILE_LINK.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _EXTERNAL_LINK.sub(r"\1", text)
    text = _BARE_URL.sub("", text)
    text = _TAG.sub("", text)
    text = _EMPHASIS.sub("", text)
    return html.unescape(text)


def split_sentences(paragraph: str) -> list[str]:
    """Splits at `.`, `!` or `?` followed by a capital, except after common abbreviations."""
    pieces, sentence = _SENTENCE_END.split(paragraph), ""
    sentences = []
    for piece in pieces:
        sentence = f"{sentence} {piece}" if sentence else piece
        if not sentence.endswith(_ABBREVIATIONS):
            sentences.append(sentence.strip())
            sentence = ""
    if sentence:
        sentences.append(sentence.strip())
    return [s for s in sentences if s]


def article_sentences(wikitext: str, min_words: int = 3) -> list[str]:
    """An article's prose as sentences; headings, lists' markers and short fragments dropped."""
    sentences = []
    for line in strip_markup(wikitext).splitlines():
        line = _SPACES.sub(" ", line).strip()
        if not line or _HEADING.match(line) or line.startswith(("|", "!", "{", "}")):
            continue
        line = _LIST_MARK.sub("", line)
        sentences.extend(s for s in split_sentences(line) if len(s.split()) >= min_words)
    return sentences


def articles_to_documents(xml_bytes: bytes, min_sentences: int = 2) -> list[list[str]]:
    """Main-namespace, non-redirect articles of a MediaWiki XML dump as lists of sentences."""
    documents = []
    for _, element in ET.iterparse(io.BytesIO(xml_bytes)):
        if not element.tag.endswith("}page"):
            continue
        namespace = element.findtext("{*}ns")
        redirect = element.find("{*}redirect") is not None
        text = element.findtext("{*}revision/{*}text") or ""
        if namespace == "0" and not redirect and not text.lstrip().lower().startswith("#redirect"):
            sentences = article_sentences(text)
            if len(sentences) >= min_sentences:
                documents.append(sentences)
        element.clear()
    return documents
