"""CoNLL reading and WordPiece window encoding for token tagging."""

import pathlib

import numpy as np
import pytest

from bert_test_utils import write_file, write_word_vocab
from bert_tf.data import conll
from bert_tf.tokenization import BertTokenizer

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "conll"

FOUR_COLUMNS = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
"""


def tokenizer_for(tmp_path, texts) -> BertTokenizer:
    return BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", texts))


def test_reads_four_columns_skipping_docstart(tmp_path):
    sentences = conll.read_conll(write_file(tmp_path / "train.txt", FOUR_COLUMNS))
    assert [s.words for s in sentences] == [
        ("EU", "rejects", "German", "call", "."),
        ("Peter", "Blackburn"),
        ("BRUSSELS",),
    ]
    assert sentences[0].labels == ("B-ORG", "O", "B-MISC", "O", "O")
    assert [s.line for s in sentences] == [3, 9, 14]
    assert conll.label_list(sentences) == ["B-LOC", "B-MISC", "B-ORG", "B-PER", "I-PER", "O"]


def test_a_document_start_ends_the_sentence_before_it(tmp_path):
    # no blank line before -DOCSTART-
    text = "EU B-ORG\nrejects O\n-DOCSTART- -X- -X- O\nPeter B-PER\n"
    assert [s.words for s in conll.read_conll(write_file(tmp_path / "train.txt", text))] == [
        ("EU", "rejects"),
        ("Peter",),
    ]


def test_two_columns_read_the_same_as_four(tmp_path):
    two = "\n".join(
        " ".join([line.split()[0], line.split()[-1]]) if line.strip() else ""
        for line in FOUR_COLUMNS.splitlines()
    )
    assert conll.read_conll(write_file(tmp_path / "two.txt", two)) == conll.read_conll(
        write_file(tmp_path / "four.txt", FOUR_COLUMNS)
    )


def test_text_to_tag_may_hold_words_alone(tmp_path):
    words = "\n".join(line.split()[0] if line.strip() else "" for line in FOUR_COLUMNS.splitlines())
    sentences = conll.read_conll(
        write_file(tmp_path / "test.txt", words), labels=["O"], untagged_ok=True
    )
    tagged = conll.read_conll(write_file(tmp_path / "four.txt", FOUR_COLUMNS))
    assert [(s.words, s.line) for s in sentences] == [(s.words, s.line) for s in tagged]
    assert all(s.labels is None for s in sentences)
    with pytest.raises(
        conll.ConllError, match=r"test.txt:2: 2 columns where the file's first line has 1$"
    ):
        conll.read_conll(write_file(tmp_path / "test.txt", "EU\nrejects O\n"), untagged_ok=True)
    with pytest.raises(
        conll.ConllError, match=r"test.txt:2: expected `word ... tag`, got 1 column$"
    ):
        conll.read_conll(write_file(tmp_path / "test.txt", "EU O\nrejects\n"), untagged_ok=True)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("EU NNP B-NP B-ORG\nrejects VBZ O\n", 2, "3 columns where the file's first line has 4"),
        ("EU B-ORG\n\nrejects\n", 3, "expected `word ... tag`, got 1 column"),
        (
            "EU NNP B-NP B-ORG\n\nBonn NNP B-NP B-GPE\n",
            3,
            "label 'B-GPE' is not in the training labels",
        ),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, text, line, message):
    path = write_file(tmp_path / "dev.txt", text)
    with pytest.raises(conll.ConllError) as error:
        conll.read_conll(path, labels=["B-ORG", "O"])
    assert str(error.value).startswith(f"{path}:{line}: {message}")
    assert "\n" not in str(error.value)


def test_missing_file_and_bytes_not_utf8_name_the_file(tmp_path):
    with pytest.raises(conll.ConllError, match=rf"^{tmp_path}/nope\.txt: no such file$"):
        conll.read_conll(tmp_path / "nope.txt")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("EU B-ORG\n\nK\u00f6ln B-LOC\n".encode("latin-1"))
    with pytest.raises(conll.ConllError, match=rf"^{latin1}:3: not UTF-8 \(invalid start byte\)$"):
        conll.read_conll(latin1)


def test_only_the_first_sub_token_carries_the_label(tmp_path):
    sentences = conll.read_conll(
        write_file(tmp_path / "train.txt", "Acme B-ORG\nCorp. I-ORG\nsaid O\n")
    )
    labels = conll.label_list(sentences)
    tokenizer = tokenizer_for(tmp_path, ["Acme Corp. said"])
    windows = conll.encode_sentences(sentences, tokenizer, labels, max_seq_length=8)
    tokens = tokenizer.convert_ids_to_tokens(windows.features["input_word_ids"][0])
    assert tokens == ["[CLS]", "acme", "corp", ".", "said", "[SEP]", "[PAD]", "[PAD]"]
    np.testing.assert_array_equal(windows.features["input_mask"][0], [1, 1, 1, 1, 1, 1, 0, 0])
    np.testing.assert_array_equal(windows.label_weights[0], [0, 1, 1, 0, 1, 0, 0, 0])
    ids = [labels.index(tag) for tag in ("B-ORG", "I-ORG", "O")]
    np.testing.assert_array_equal(windows.label_ids[0], [0, ids[0], ids[1], 0, ids[2], 0, 0, 0])
    np.testing.assert_array_equal(windows.word_index[0], [-1, 0, 1, -1, 2, -1, -1, -1])


def test_a_word_without_word_pieces_becomes_unk(tmp_path):
    # A soft hyphen alone is removed by normalization: no WordPiece, yet the word keeps its label.
    sentences = conll.read_conll(write_file(tmp_path / "train.txt", "a O\n\u00ad B-X\nb O\n"))
    tokenizer = tokenizer_for(tmp_path, ["a b"])
    windows = conll.encode_sentences(
        sentences, tokenizer, conll.label_list(sentences), max_seq_length=8
    )
    assert tokenizer.convert_ids_to_tokens(windows.features["input_word_ids"][0][:5]) == [
        "[CLS]",
        "a",
        "[UNK]",
        "b",
        "[SEP]",
    ]
    assert windows.decode(windows.word_index) == [[0, 1, 2]]


def test_long_sentences_split_into_windows_and_every_word_decodes_once(tmp_path):
    sentences = conll.read_conll(FIXTURES / "test.txt")
    tokenizer = tokenizer_for(tmp_path, [" ".join(s.words) for s in sentences])
    seq = 16
    windows = conll.encode_sentences(
        sentences, tokenizer, conll.label_list(sentences), max_seq_length=seq
    )
    long = max(range(len(sentences)), key=lambda i: len(sentences[i].words))
    rows = np.flatnonzero((windows.sentence_index == long).any(axis=1))
    pieces = len(tokenizer.tokenize([" ".join(sentences[long].words)]).flat_values)
    # windows half a window apart
    assert len(rows) == -(-(pieces - (seq - 2)) // ((seq - 2) // 2)) + 1
    assert windows.features["input_word_ids"].shape[1] == seq
    # Each (sentence, word) is read from exactly one
    # position, and decoding gets every word back in order.
    assert windows.best.sum() == sum(len(s.words) for s in sentences)
    assert windows.decode(windows.word_index) == [list(range(len(s.words))) for s in sentences]
    assert windows.decode(windows.label_ids) == [
        [conll.label_list(sentences).index(t) for t in s.labels] for s in sentences
    ]
    # A word seen in two windows is read from the one where it has more context: windows hold 14
    # pieces 7 apart, so the first window keeps positions 1..11 and inner windows the middle, 5..11.
    best = [set(np.flatnonzero(windows.best[row])) for row in rows]
    assert best[0] <= set(range(1, 12)) and best[0] >= set(range(1, 5))
    assert all(positions <= set(range(5, 12)) for positions in best[1:-1])
