"""run_classifier.py end to end, in subprocesses: a tiny BERT learns a sentiment fixture; bad data.

The csv/tsv task trains through the driver in test_sentence_prediction.py.
"""

import csv

import numpy as np

from bert_test_utils import run_script, script_failures, write_tiny_config

POSITIVE = ["good", "great", "wonderful", "superb", "lovely", "brilliant"]
NEGATIVE = ["bad", "awful", "terrible", "dull", "boring", "poor"]
FILLER = [
    "the",
    "film",
    "movie",
    "was",
    "really",
    "plot",
    "acting",
    "quite",
    "story",
    "a",
    "and",
    "it",
]


def sentiment_examples(n, seed):
    """`n` (sentence, label) pairs: filler words around one sentiment word; 1 = positive."""
    rng = np.random.default_rng(seed)
    examples = []
    for i in range(n):
        label = i % 2
        words = list(rng.choice(FILLER, 4))
        words.insert(rng.integers(0, 5), rng.choice(POSITIVE if label else NEGATIVE))
        examples.append((" ".join(words), label))
    return examples


def write_tsv(path, rows):
    path.write_text("".join("\t".join(map(str, row)) + "\n" for row in rows), encoding="utf-8")


def model_files(tmp_path, words):
    """(vocab.txt with the special tokens and `words`, a tiny bert_config.json)."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    return vocab, write_tiny_config(tmp_path, vocab_size=64)


def test_learns_sst2_layout_and_writes_submission(tmp_path):
    train, dev, test = (
        sentiment_examples(160, 0),
        sentiment_examples(48, 1),
        sentiment_examples(16, 2),
    )
    data = tmp_path / "SST-2"
    data.mkdir()
    write_tsv(data / "train.tsv", [("sentence", "label"), *train])
    write_tsv(data / "dev.tsv", [("sentence", "label"), *dev])
    write_tsv(
        data / "test.tsv", [("index", "sentence"), *((i, s) for i, (s, _) in enumerate(test))]
    )
    vocab, config = model_files(tmp_path, POSITIVE + NEGATIVE + FILLER)
    out = tmp_path / "out"
    result = run_script(
        "run_classifier.py",
        "--task_name=SST-2",
        f"--data_dir={data}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={out}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        "--max_seq_length=12",
        "--train_batch_size=8",
        "--learning_rate=1e-3",
        "--num_train_epochs=5",
        "--eval_batch_size=16",
        "--predict_batch_size=16",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # Not a terminal: Keras prints a line an epoch, not its bar redrawn with backspaces.
    assert "\b" not in result.stdout and result.stdout.count("Epoch 5/5") == 1
    results = dict(
        line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()
    )
    assert set(results) == {"accuracy"}
    assert float(results["accuracy"]) >= 0.85, results  # chance is 0.5
    rows = list(csv.reader((out / "SST-2.tsv").open(), delimiter="\t"))
    assert rows[0] == ["index", "prediction"]
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(len(test))]
    assert {r[1] for r in rows[1:]} <= {"0", "1"}
    correct = np.mean([r[1] == str(label) for r, (_, label) in zip(rows[1:], test)])
    assert correct >= 0.8, rows
    # as the csv/tsv tasks
    results = list(csv.reader((out / "test_results.tsv").open(), delimiter="\t"))
    assert results[0] == ["index", "prediction", "probability_0", "probability_1"]
    assert [r[:2] for r in results[1:]] == [[str(i), r[1]] for i, r in enumerate(rows[1:])]


def test_a_malformed_csv_row_and_no_data_dir_are_one_line_errors(tmp_path):
    """Refused before anything is written. run_classifier.py has no flag naming a split's file:
    every run reads --data_dir."""
    (tmp_path / "train.csv").write_text("id,review,verdict\n1,a good film,pos\n2,a bad film\n")
    vocab, config = model_files(tmp_path, ["a", "good", "bad", "film"])
    model = [
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={tmp_path / 'out'}",
    ]
    cases = [
        (
            [
                "--task_name=csv",
                "--text_a_column=review",
                "--label_column=verdict",
                f"--data_dir={tmp_path}",
                *model,
                "--do_train",
                "--max_seq_length=16",
            ],
            f"{tmp_path}/train.csv:3: malformed CSV row: 2 columns, the header names 3",
        ),
        (["--task_name=SST-2", *model, "--do_predict"], "--data_dir is required"),
    ]
    assert script_failures("run_classifier.py", *(argv for argv, _ in cases)) == [
        (1, f"run_classifier.py: error: {message}") for _, message in cases
    ]
    assert not (tmp_path / "out").exists()
