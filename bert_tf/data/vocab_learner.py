"""Learn a WordPiece vocab from a corpus with tensorflow-text's `wordpiece_vocab` tools.

The corpus is split into words by our `BasicTokenizer` (the reference BERT
rules, the same split `BertTokenizer` applies before WordPiece), and
`wordpiece_tokenizer_learner_lib.learn` learns the pieces from the word counts.
`bert_vocab_from_dataset` would split with tensorflow-text's own BasicTokenizer,
whose normalization differs, which would leave pieces our tokenizer never asks for.
A CJK character is always a word of its own, so its `##` copy, which the learner
adds for every character, is never used: it is left out unless asked for.

Example:
>>> with open("corpus.txt", "w") as corpus_file:
...     _ = corpus_file.write("The cat sat on the mat. " * 12)
>>> tokens = create_vocab("corpus.txt", "my_vocab.txt", vocab_size=100)
>>> tokens[:5], tokens[15:20]
(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'], ['the', 'cat', 'mat', 'on', 'sat'])
"""

from __future__ import annotations

import collections
import os

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from bert_tf import io_utils
from bert_tf.data import corpus
from bert_tf.errors import UserInputError
from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.vocab import SPECIAL_TOKENS

MAX_TOKEN_LENGTH = 50  # the learner's longest piece; it skips longer words


def reserved_tokens(num_unused: int = 0) -> list[str]:
    """`[PAD] [UNK] [CLS] [SEP] [MASK]`, then `[unused0]` ... `[unused{num_unused - 1}]`."""
    return list(SPECIAL_TOKENS) + [f"[unused{i}]" for i in range(num_unused)]


def count_words(files, do_lower_case: bool, batch_size: int = 1024) -> collections.Counter:
    """Word -> count over the lines of `files` (those over `corpus.MAX_LINE_BYTES` split), split as
    `BertTokenizer` splits corpus text (a literal `[SEP]` into `[`, `sep`, `]`)."""
    basic_tokenizer = BasicTokenizer(do_lower_case, split_special_tokens=True)
    lines = (
        tf.data.TextLineDataset(files)
        .batch(batch_size)
        .map(corpus.split_long_lines)
        .map(basic_tokenizer.tokenize, num_parallel_calls=tf.data.AUTOTUNE)
    )
    try:
        return learner.count_words(lines.prefetch(tf.data.AUTOTUNE))
    except StopIteration:  # learner.count_words on no words at all
        raise UserInputError(f"`input_file`: no words in {', '.join(files)}") from None


def learn_vocab(
    files,
    vocab_size: int,
    do_lower_case: bool = True,
    num_unused: int = 0,
    keep_cjk_suffix_pieces: bool = False,
) -> list[str]:
    """The WordPiece vocab (at most `vocab_size` tokens, reserved ones first) of `files`.

    Every character of the corpus's words (those of up to `MAX_TOKEN_LENGTH` characters) is
    kept, also as a `##` piece (CJK characters only with `keep_cjk_suffix_pieces`), so a small
    `vocab_size` can be out of reach: a `ValueError`
    then names the smallest size, before any learning.
    """
    reserved = reserved_tokens(num_unused)
    if vocab_size <= len(reserved):
        raise UserInputError(
            f"`vocab_size`={vocab_size} leaves no room after the {len(reserved)} reserved tokens"
        )
    word_counts = count_words(files, do_lower_case)
    chars = learned_characters(word_counts, reserved)
    unused_pieces = (
        set()
        if keep_cjk_suffix_pieces
        else {f"##{c}" for c in chars if unicode_tables.is_cjk_char(c)}
    )
    # the reserved tokens, characters, ## pieces
    smallest = len(reserved) + 2 * len(chars) - len(unused_pieces)
    if vocab_size < smallest:
        raise UserInputError(
            f"`vocab_size`={vocab_size} is too small for this corpus: the "
            f"smallest vocab it can learn has {smallest} tokens (its {len(chars)} "
            f"characters, those but CJK also as a ## piece, and {len(reserved)} "
            f"reserved tokens); use `vocab_size`={smallest} or more"
        )
    # The learner counts the unused pieces in its size: learn that many more, then drop them.
    tokens = learner.learn(
        word_counts,
        vocab_size + len(unused_pieces),
        reserved,
        max_token_length=MAX_TOKEN_LENGTH,
        max_unique_chars=len(chars),
    )
    tokens = [token for token in tokens if token not in unused_pieces]
    # the learner's search over count thresholds can end above the size
    if len(tokens) > vocab_size:
        tokens = drop_least_used_pieces(tokens, len(reserved), vocab_size, word_counts)
    return tokens


def learned_characters(word_counts: collections.Counter, reserved: list[str]) -> set[str]:
    """The characters of the words the learner learns from: all but the reserved tokens and
    the words of more than `MAX_TOKEN_LENGTH` characters.

    >>> counts = collections.Counter({"ab": 2, "[PAD]": 1, "c" * 51: 1})
    >>> sorted(learned_characters(counts, ["[PAD]"]))
    ['a', 'b']
    """
    reserved = set(reserved)
    return {
        char
        for word in word_counts
        if word not in reserved and len(word) <= MAX_TOKEN_LENGTH
        for char in word
    }


def _longer_pieces(tokens: list[str]) -> list[str]:
    """The tokens of more than one character (`##` aside): those a vocab can do without."""
    return [token for token in tokens if len(token.removeprefix("##")) > 1]


def drop_least_used_pieces(
    tokens: list[str], num_reserved: int, vocab_size: int, word_counts: collections.Counter
) -> list[str]:
    """`tokens` less the multi-character pieces that tokenizing `word_counts` uses least, down
    to `vocab_size` tokens (which `learn_vocab` checks leaves room for the rest).

    Every character and its `##` form stay, so every word still tokenizes.

    Example:
    >>> tokens = list(SPECIAL_TOKENS) + ["a", "b", "##a", "##b", "ab", "ba", "##ab"]
    >>> counts = collections.Counter({"ab": 10, "ba": 3, "abab": 1})  # uses: ab 11, ba 3, ##ab 1
    >>> drop_least_used_pieces(tokens, 5, 11, counts)[5:]
    ['a', 'b', '##a', '##b', 'ab', 'ba']
    """
    excess = len(tokens) - vocab_size
    pieces = _longer_pieces(tokens[num_reserved:])
    words = list(word_counts)
    wordpiece = tf_text.FastWordpieceTokenizer(
        tokens, token_out_type=tf.string, unknown_token="[UNK]", no_pretokenization=True
    )
    split = wordpiece.tokenize(words)  # [words, (pieces)]
    used, position = np.unique(split.flat_values.numpy(), return_inverse=True)
    uses = np.bincount(
        position, np.repeat([word_counts[word] for word in words], split.row_lengths())
    )
    uses = dict(zip((piece.decode("utf-8") for piece in used), uses))
    # ties: vocab order
    dropped = set(sorted(pieces, key=lambda piece: uses.get(piece, 0))[:excess])
    return [token for token in tokens if token not in dropped]


def create_vocab(
    input_file: str,
    output_file: str | os.PathLike,
    vocab_size: int,
    do_lower_case: bool = True,
    num_unused: int = 0,
    keep_cjk_suffix_pieces: bool = False,
) -> list[str]:
    """Learns the vocab of the corpus globs `input_file` (comma-separated) into `output_file`.

    The file is written atomically, one token a line. Bad arguments (a glob that
    matches nothing, an output that `corpus.check_output_files` refuses, a corpus
    that `corpus.check_corpus` refuses, no words, no room for the reserved tokens,
    no output directory) raise `ValueError` with a one-line message naming the
    flag or file, before any learning where they can.
    """
    files = corpus.expand_input_files(input_file)
    corpus.check_output_files([os.fspath(output_file)], files)
    corpus.check_corpus(files)
    corpus.check_output_directory(output_file)
    tokens = learn_vocab(files, vocab_size, do_lower_case, num_unused, keep_cjk_suffix_pieces)
    io_utils.atomic_write_text(output_file, "".join(f"{token}\n" for token in tokens))
    return tokens
