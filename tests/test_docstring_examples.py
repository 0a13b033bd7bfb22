"""Every `>>>` example in bert_tf's docstrings runs and prints what it shows; none is skipped.

Each module's examples run in a fresh working directory holding the small files
they name by relative path: `vocab.txt`, `bert_config.json` and one file per task format.
"""

import doctest
import importlib
import io
import json
import pathlib

import pytest

from bert_tf import BertConfig

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "bert_tf"

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    ".",
    ",",
    "!",
    "?",
    "a",
    "the",
    "it",
    "in",
    "by",
    "was",
    "who",
    "she",
    "hello",
    "world",
    "great",
    "movie",
    "dull",
    "film",
    "john",
    "lives",
    "paris",
    "ann",
    "wrote",
    "written",
    "opened",
    "door",
    "walked",
    "ate",
    "sat",
    "down",
    "question",
    "its",
    "answer",
    "##s",
]
QUESTION = {
    "id": "q1",
    "question": "Who wrote it?",
    "answers": [{"text": "Ann", "answer_start": 18}],
}
SQUAD = {
    "version": "1.1",
    "data": [
        {"title": "Ann", "paragraphs": [{"context": "It was written by Ann.", "qas": [QUESTION]}]}
    ],
}
FILES = {
    "vocab.txt": "\n".join(VOCAB) + "\n",
    "bert_config.json": BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    ).to_json_string(),
    # One tiny file in each task's format: CoNLL, SQuAD 1.1, SWAG, GLUE SST-2.
    "train.txt": "John B-PER\nlives O\nin O\nParis B-LOC\n. "
    "O\n\nAnn B-PER\nLee I-PER\nwrote O\nit O\n. O\n",
    "dev-v1.1.json": json.dumps(SQUAD),
    "val.csv": ",sent1,sent2,ending0,ending1,ending2,ending3,label\n"
    "0,She opened the door.,She,walked in.,ate the door.,sat down.,wrote it.,0\n",
    "dev.tsv": "sentence\tlabel\na great movie\t1\na dull film\t0\n",
}


def modules_with_examples() -> list[str]:
    """The names of the package's modules whose source holds a `>>>` line."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.parametrize("module_name", modules_with_examples())
def test_docstring_examples(module_name, tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(module_name)
    tests = [test for test in doctest.DocTestFinder().find(module) if test.examples]
    source = pathlib.Path(module.__file__).read_text(encoding="utf-8")
    assert sum(len(test.examples) for test in tests) == source.count(">>>"), (
        "a `>>>` the finder misses"
    )

    report = io.StringIO()
    # `...` stands for untrained outputs
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=report.write)
    skipped = [
        f"{test.name}: {example.source.strip()}"
        for test in tests
        for example in test.examples
        if example.options.get(doctest.SKIP)
    ]
    assert runner.failures == 0 and not skipped, report.getvalue() + "".join(
        f"\n+SKIP: {s}" for s in skipped
    )
