"""The fine-tuning benchmark's data: parsing the public files, splitting and pairing, and the
files it writes for run_classifier.py and run_ner.py."""

import csv

import pytest

from benchmarks import finetuning_data as data

SNIPPETS = (
    "1\t2.26666666667\tThe Rock is destined to be the 21st Century's new ''Conan''.\r\n"
    "2\t-0.6\tEffective but too tepid biopic\r\n"
    "\r\n"
    "10\t0.0\tA neutral snippet.\r\n"
    "20\t-1.5\tA dull one.\r\n"
)


def test_parse_snippets_reads_id_score_text_and_skips_blank_lines():
    assert data.parse_snippets(SNIPPETS, "snippets.txt") == [
        (1, 2.26666666667, "The Rock is destined to be the 21st Century's new ''Conan''."),
        (2, -0.6, "Effective but too tepid biopic"),
        (10, 0.0, "A neutral snippet."),
        (20, -1.5, "A dull one."),
    ]


def test_parse_snippets_names_the_malformed_line():
    with pytest.raises(data.BenchmarkDataError, match=r"snippets.txt:2: not `id<TAB>score<TAB>"):
        data.parse_snippets("1\t0.5\tGood.\n2 -0.5 Bad.\n", "snippets.txt")


def test_parse_slash_tagged_splits_at_the_last_slash_and_normalizes_tags():
    text = "He/PRP ate/VBD 1/2/CD of/IN ``/`` it/PRP ''/'' ./.\n\nRunning/VBG|NN ./.\n"
    assert data.parse_slash_tagged(text, "tagged.txt") == [
        [
            ("He", "PRP"),
            ("ate", "VBD"),
            ("1/2", "CD"),
            ("of", "IN"),
            ("``", '"'),
            ("it", "PRP"),
            ("''", '"'),
            (".", "."),
        ],
        [("Running", "VBG"), (".", ".")],
    ]


def test_parse_slash_tagged_names_a_token_without_tag():
    with pytest.raises(data.BenchmarkDataError, match=r"tagged.txt:2: 'ate' is not word/TAG"):
        data.parse_slash_tagged("He/PRP\nate ./.\n", "tagged.txt")


def test_sentiment_splits_drop_neutral_snippets_and_hold_out_multiples_of_ten():
    snippets = [(i, (-1.0) ** i * (i % 7), f"snippet {i}") for i in range(1, 101)]
    train, held_out = data.sentiment_splits(snippets, num_train=1000, num_eval=1000)
    neutral = {i for i in range(1, 101) if i % 7 == 0}
    assert sorted(text for text, _ in held_out) == sorted(
        f"snippet {i}" for i in range(10, 101, 10) if i not in neutral
    )
    assert len(train) == 100 - 10 - len(neutral - set(range(10, 101, 10)))
    assert all(
        (label == "positive") == (i % 2 == 0)
        for text, label in train + held_out
        for i in [int(text.split()[1])]
    )
    small_train, small_eval = data.sentiment_splits(snippets, num_train=5, num_eval=3)
    assert (small_train, small_eval) == (train[:5], held_out[:3])


def test_polarity_pairs_label_whether_both_texts_share_their_polarity():
    examples = [(f"good {i}", "positive") for i in range(5)] + [
        (f"bad {i}", "negative") for i in range(4)
    ]
    pairs = data.polarity_pairs(examples, num_pairs=10, seed=3)
    assert len(pairs) == 10
    polarity = dict(examples)
    for text_a, text_b, label in pairs:
        assert text_a != text_b
        assert label == ("same" if polarity[text_a] == polarity[text_b] else "different")
    first_round = [text for a, b, _ in pairs[:4] for text in (a, b)]
    assert len(set(first_round)) == 8  # no example recurs before each has been used
    assert data.polarity_pairs(examples, num_pairs=10, seed=3) == pairs
    with pytest.raises(data.BenchmarkDataError, match="at least 2 examples"):
        data.polarity_pairs(examples[:1], num_pairs=1)


def test_written_files_hold_the_rows_and_sentences_and_read_back(tmp_path):
    pairs = [('A text, with a comma and "quotes"', "B text", "same"), ("x", "y", "different")]
    data.write_csv(tmp_path / "pairs.csv", pairs)
    with open(tmp_path / "pairs.csv", newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["text", "text_b", "label"], *map(list, pairs)]
    assert data.read_csv(tmp_path / "pairs.csv") == pairs
    singles = [("Good.", None, "positive"), ("Bad.", None, "negative")]
    data.write_csv(tmp_path / "singles.csv", singles)
    assert (tmp_path / "singles.csv").read_text().splitlines()[0] == "text,label"
    assert data.read_csv(tmp_path / "singles.csv") == singles
    sentences = [[("He", "PRP"), ("ran", "VBD")], [("1/2", "CD")]]
    data.write_conll(tmp_path / "train.txt", sentences)
    assert (tmp_path / "train.txt").read_text() == "He PRP\nran VBD\n\n1/2 CD\n\n"
    assert data.read_conll(tmp_path / "train.txt") == sentences
