"""The fine-tuning benchmark's tasks, built from the public data `finetuning_sources` fetches.

- Sentiment: Rotten Tomatoes snippets with human sentiment scores, neutral ones dropped, the
  rest positive or negative.
- Sentiment pairs: two snippets, labelled by whether they share their polarity.
- Part of speech: `word/TAG` sentences (Penn Treebank tags).

Pure Python, without TensorFlow, so that its tests are fast.
"""

from __future__ import annotations

import csv
import pathlib
import random

EVAL_EVERY = 10  # snippets whose id is a multiple of this are held out for evaluation
# Both quote tags become the OANC sample's `"`: the WSJ sample's `''` never occurs in OANC's.
QUOTE_TAGS = {"``": '"', "''": '"'}


class BenchmarkDataError(ValueError):
    """A data file that does not have the expected format; the message names its line."""


def parse_snippets(text: str, source: str) -> list[tuple[int, float, str]]:
    """`id<TAB>score<TAB>text` lines -> (id, score, text); blank lines are skipped."""
    snippets = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            snippets.append((int(fields[0]), float(fields[1]), fields[2].strip()))
        except (ValueError, IndexError):
            raise BenchmarkDataError(f"{source}:{number}: not `id<TAB>score<TAB>text`") from None
    return snippets


def parse_slash_tagged(text: str, source: str) -> list[list[tuple[str, str]]]:
    """One sentence a line of `word/TAG` tokens -> [(word, tag)] per sentence.

    The word is everything before the last slash (`1/2/CD` is `1/2`). Of an ambiguous tag
    (`VBG|NN`) the first is kept; quote tags become `QUOTE_TAGS`'s.
    """
    sentences = []
    for number, line in enumerate(text.splitlines(), 1):
        tokens = line.split()
        if not tokens:
            continue
        sentence = []
        for token in tokens:
            word, slash, tag = token.rpartition("/")
            if not (slash and word and tag):
                raise BenchmarkDataError(f"{source}:{number}: {token!r} is not word/TAG")
            tag = tag.split("|")[0]
            sentence.append((word, QUOTE_TAGS.get(tag, tag)))
        sentences.append(sentence)
    return sentences


def sentiment_splits(snippets, num_train: int, num_eval: int, seed: int = 0):
    """(train, eval) lists of (text, "positive"|"negative"), neutral snippets left out.

    Eval snippets are those whose id is a multiple of `EVAL_EVERY`; each side is shuffled
    with `seed` and cut to its size.
    """
    labelled = [
        (i, text, "positive" if score > 0 else "negative") for i, score, text in snippets if score
    ]
    train = [(text, label) for i, text, label in labelled if i % EVAL_EVERY]
    held_out = [(text, label) for i, text, label in labelled if not i % EVAL_EVERY]
    random.Random(seed).shuffle(train)
    random.Random(seed).shuffle(held_out)
    return train[:num_train], held_out[:num_eval]


def polarity_pairs(examples, num_pairs: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """(text_a, text_b, "same"|"different") pairs of distinct examples, by their polarity.

    Each round pairs the examples in a new shuffled order, one after the other, so an
    example recurs only once every example has been used.
    """
    if len(examples) < 2:
        raise BenchmarkDataError(f"pairs need at least 2 examples, got {len(examples)}")
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < num_pairs:
        order = rng.sample(examples, len(examples))
        for (text_a, label_a), (text_b, label_b) in zip(order[::2], order[1::2]):
            pairs.append((text_a, text_b, "same" if label_a == label_b else "different"))
    return pairs[:num_pairs]


def write_csv(path: pathlib.Path, rows) -> None:
    """(text, text_b or None, label) rows as a CSV file with a header row (`text,label` or
    `text,text_b,label`), as run_classifier.py's `--task_name=csv` reads."""
    header = ("text", "label") if rows[0][1] is None else ("text", "text_b", "label")
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows([value for value in row if value is not None] for row in rows)


def read_csv(path: pathlib.Path) -> list[tuple[str, str | None, str]]:
    """The (text, text_b or None, label) rows of a `write_csv` file."""
    with open(path, encoding="utf-8", newline="") as f:
        header, *rows = csv.reader(f)
    columns = [
        header.index(name) if name in header else None for name in ("text", "text_b", "label")
    ]
    return [tuple(None if i is None else row[i] for i in columns) for row in rows]


def write_conll(path: pathlib.Path, sentences) -> None:
    """`word tag` lines, a blank line after each sentence, as run_ner.py reads."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(
            "".join(f"{word} {tag}\n" for word, tag in sentence) + "\n" for sentence in sentences
        )


def read_conll(path: pathlib.Path) -> list[list[tuple[str, ...]]]:
    """The sentences of a CoNLL file: the columns of each line (`(word, tag)` of `write_conll`'s;
    `(word, gold, predicted)` of run_ner.py's predictions), a blank line ending a sentence."""
    sentences = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sentences[-1].append(tuple(line.split()))
        elif sentences[-1]:
            sentences.append([])
    return [sentence for sentence in sentences if sentence]
