"""Tagging metrics: hand-computed accuracy, seqeval vs conlleval.pl, strict BIOES, CoNLL output."""

import re
import subprocess

import pytest

from bert_tf.corpora.public_data import fetch_seqeval_sample
from bert_tf.metrics import tagging_metrics


def conlleval(perl_script, path) -> dict[str, float]:
    """Runs conlleval.pl on a `word ... gold predicted` file; overall scores, 4-place fractions."""
    with open(path, encoding="utf-8") as f:
        output = subprocess.run(
            ["perl", str(perl_script)], stdin=f, capture_output=True, text=True, check=True
        ).stdout
    # accuracy:  84.08%; precision:  68.83%; recall:  80.83%; FB1:  74.35
    line = output.splitlines()[1]
    values = dict(re.findall(r"(\w+):\s+([\d.]+)", line))
    names = {"accuracy": "accuracy", "precision": "precision", "recall": "recall", "f1": "FB1"}
    return {name: round(float(values[key]) / 100, 4) for name, key in names.items()}


def read_gold_and_predicted(path):
    """A `word ... gold predicted` file's sentences: [words, gold, predicted], lists each."""
    with open(path, encoding="utf-8") as f:
        blocks = [block for block in re.split(r"\n\s*\n", f.read()) if block.strip()]
    rows = [[line.split() for line in block.strip().splitlines()] for block in blocks]
    return [
        [[fields[column] for fields in sentence] for sentence in rows] for column in (0, -2, -1)
    ]


def test_token_accuracy_by_hand():
    gold = [["B-PER", "I-PER", "O"], ["O"]]
    predicted = [["B-PER", "O", "O"], ["B-LOC"]]
    assert tagging_metrics.token_accuracy(gold, predicted) == 2 / 4


def test_plain_tags_get_accuracy_only():
    labels = ["DT", "NN", "VBZ"]
    assert tagging_metrics.entity_scheme(labels) is None
    scores = tagging_metrics.tagging_scores([["DT", "NN", "VBZ"]], [["DT", "VBZ", "VBZ"]], None)
    assert scores == {"accuracy": pytest.approx(2 / 3)}


def test_seqeval_matches_conlleval_on_seqeval_sample(tmp_path):
    sample, perl_script = fetch_seqeval_sample()
    words, gold, predicted = read_gold_and_predicted(sample)
    assert sum(map(len, words)) == 961  # the whole sample, as conlleval.pl counts it
    scheme = tagging_metrics.entity_scheme({tag for s in gold + predicted for tag in s})
    assert scheme == "BIO"
    ours = tagging_metrics.tagging_scores(gold, predicted, scheme)
    reference = conlleval(perl_script, sample)
    assert {name: round(value, 4) for name, value in ours.items()} == reference
    # Our predictions file is conlleval's input format: it scores the same.
    written = tmp_path / "predictions.txt"
    tagging_metrics.write_conll_predictions(written, words, gold, predicted)
    assert conlleval(perl_script, written) == reference
    assert read_gold_and_predicted(written) == [words, gold, predicted]


@pytest.mark.parametrize("scheme, single, last", [("BIOES", "S", "E"), ("BILOU", "U", "L")])
def test_bioes_and_bilou_use_the_strict_scheme(scheme, single, last):
    gold = [[f"{single}-PER", "O", "B-LOC", f"{last}-LOC"], ["B-ORG", "I-ORG", f"{last}-ORG"]]
    predicted = [[f"{single}-PER", "O", "B-LOC", "I-LOC"], ["B-ORG", "I-ORG", f"{last}-ORG"]]
    assert tagging_metrics.entity_scheme({t for s in gold for t in s}) == scheme
    # B-LOC I-LOC without its closing tag is no entity
    # in the strict scheme: 2 found, 2 correct, 3 gold.
    scores = tagging_metrics.tagging_scores(gold, predicted, scheme)
    assert scores == pytest.approx(
        {"accuracy": 6 / 7, "precision": 1.0, "recall": 2 / 3, "f1": 0.8}
    )
    # The lenient conlleval mode would have accepted the broken span.
    assert tagging_metrics.tagging_scores(gold, predicted, "BIO")["f1"] == 1.0


def test_mixed_bioes_and_bilou_tags_are_plain_tags():
    assert tagging_metrics.entity_scheme(["B-PER", "E-PER", "L-PER", "O"]) is None  # no one scheme


def test_predictions_file_layout(tmp_path):
    path = tmp_path / "out.txt"
    tagging_metrics.write_conll_predictions(
        path,
        [["EU", "rejects"], ["Bonn"]],
        [["B-ORG", "O"], ["B-LOC"]],
        [["B-ORG", "B-LOC"], ["B-LOC"]],
    )
    assert path.read_text() == "EU B-ORG B-ORG\nrejects O B-LOC\n\nBonn B-LOC B-LOC\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left behind


def test_bmes_word_segmentation_scores_the_words_of_the_spans():
    assert tagging_metrics.entity_scheme(["B", "E", "M", "S"]) == tagging_metrics.SEGMENTATION
    # 南京市|今天|发布|了 against 南京|市|今天|发布了: 今天 is the one shared word.
    gold = [["B", "M", "E", "B", "E", "B", "E", "S"]]
    predicted = [["B", "E", "S", "B", "E", "B", "M", "E"]]
    scores = tagging_metrics.tagging_scores(gold, predicted, tagging_metrics.SEGMENTATION)
    assert scores == pytest.approx(
        {"accuracy": 4 / 8, "precision": 1 / 4, "recall": 1 / 4, "f1": 1 / 4}
    )
    # Broken sequences still make words: M after S starts one, B without E ends before the next B.
    assert sorted(tagging_metrics.word_spans(["S", "M", "E", "B", "B", "E"])) == [
        (0, 1),
        (1, 3),
        (3, 4),
        (4, 6),
    ]


def test_typed_bmes_tags_are_scored_as_strict_bioes():
    gold = [["B-ORG", "M-ORG", "E-ORG", "O", "S-PER"]]
    assert tagging_metrics.entity_scheme(gold[0]) == "BMES"
    assert tagging_metrics.entity_scheme(["B-ORG", "M-ORG", "I-ORG", "E-ORG"]) is None
    # strict: the ORG without its E- is no entity
    wrong_end = [["B-ORG", "M-ORG", "M-ORG", "O", "S-PER"]]
    scores = tagging_metrics.tagging_scores(gold, wrong_end, "BMES")
    assert scores == pytest.approx({"accuracy": 0.8, "precision": 1.0, "recall": 0.5, "f1": 2 / 3})
