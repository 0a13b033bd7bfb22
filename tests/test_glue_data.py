"""GLUE and XNLI processors on official layouts, the csv/tsv task, bad-data errors, encoding."""

import pathlib
import re

import numpy as np
import pytest

from bert_test_utils import write_word_vocab
from bert_tf.data.glue import (
    GLUE_PROCESSORS,
    DataError,
    InputExample,
    XnliProcessor,
    encode_examples,
    get_processor,
)
from bert_tf.tokenization import BertTokenizer

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "glue"

# task -> split -> (number of examples, first example), hand-checked against the fixture files.
EXPECTED = {
    "cola": {
        "train": (
            3,
            InputExample("train-0", "The dog chased the ball across the yard.", None, "1"),
        ),
        "dev": (2, InputExample("dev-0", "Him left quickly the.", None, "0")),
        "test": (2, InputExample("0", "Birds sing in the morning.")),
    },
    "sst2": {
        "train": (3, InputExample("train-0", "a warm , funny and moving film ", None, "1")),
        "dev": (2, InputExample("dev-0", "a delightful surprise ", None, "1")),
        "test": (2, InputExample("0", "an honest , touching story ")),
    },
    "mrpc": {
        "train": (
            2,
            InputExample(
                "train-0",
                "The company reported higher profits on Tuesday.",
                "Profits rose at the company, it said Tuesday.",
                "1",
            ),
        ),
        "dev": (
            1,
            InputExample("dev-0", "Sales fell by ten percent.", "Sales dropped 10 percent.", "1"),
        ),
        "test": (2, InputExample("0", "The team won the final.", "The final was won by the team.")),
    },
    "stsb": {
        "train": (
            2,
            InputExample("0", "A man is playing a guitar.", "A man plays the guitar.", 4.8),
        ),
        "dev": (
            2,
            InputExample("0", "A woman is cutting onions.", "A woman slices an onion.", 4.2),
        ),
        "test": (1, InputExample("0", "Markets fall sharply.", "Stocks drop steeply.")),
    },
    "qqp": {
        "train": (
            2,
            InputExample(
                "201", "How do I learn to cook?", "What is the best way to learn cooking?", "1"
            ),
        ),
        "dev": (
            1,
            InputExample(
                "301", "Where can I buy cheap books?", "Where do I find inexpensive books?", "1"
            ),
        ),
        "test": (
            2,
            InputExample("0", "What is a good first car?", "Which car should I buy first?"),
        ),
    },
    "mnli": {
        "train": (
            3,
            InputExample("0", "The boy ran home after school.", "The boy went home.", "entailment"),
        ),
        "dev_matched": (
            1,
            InputExample("3", "She painted the fence red.", "The fence is red.", "entailment"),
        ),
        "dev_mismatched": (
            2,
            InputExample(
                "4", "We thank you for your gift.", "We never received a gift.", "contradiction"
            ),
        ),
        "test_matched": (1, InputExample("0", "The car is fast.", "The car is slow.")),
        "test_mismatched": (2, InputExample("0", "Please write soon.", "Write back quickly.")),
    },
    "qnli": {
        "train": (
            2,
            InputExample("0", "What color is grass?", "Grass is usually green.", "entailment"),
        ),
        "dev": (
            1,
            InputExample("0", "When does the shop open?", "The shop opens at nine.", "entailment"),
        ),
        "test": (
            1,
            InputExample("0", "How many legs does a spider have?", "A spider has eight legs."),
        ),
    },
    "rte": {
        "train": (
            2,
            InputExample(
                "0",
                "The museum was built in 1900 and is still open.",
                "The museum is open.",
                "entailment",
            ),
        ),
        "dev": (
            1,
            InputExample("0", "Anna bought a new bicycle.", "Anna owns a bicycle.", "entailment"),
        ),
        "test": (1, InputExample("0", "The lake froze in January.", "The lake was frozen.")),
    },
    "wnli": {
        "train": (
            2,
            InputExample(
                "0",
                "The trophy did not fit in the case because it was too big.",
                "The trophy was too big.",
                "1",
            ),
        ),
        "dev": (
            1,
            InputExample("0", "Tom thanked Bob because he had helped.", "Bob had helped.", "1"),
        ),
        "test": (
            1,
            InputExample(
                "0",
                "The cup fell off the shelf because it was unstable.",
                "The shelf was unstable.",
            ),
        ),
    },
}


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_each_glue_processor_reads_its_official_layout(task):
    processor = get_processor(task)
    data_dir = str(FIXTURES / processor.name)
    assert ("train", *processor.eval_splits, *processor.predict_splits) == tuple(EXPECTED[task])
    for split, (count, first) in EXPECTED[task].items():
        examples = processor.read(data_dir, split)
        assert len(examples) == count, split
        assert examples[0] == first, split
        labels = {e.label for e in examples}
        if split in processor.predict_splits:
            assert labels == {None}
        elif processor.is_regression:
            assert all(isinstance(label, float) for label in labels)
        else:
            assert labels <= set(processor.labels(data_dir))


def test_label_sets_regression_and_submission_names():
    assert GLUE_PROCESSORS["mnli"].labels("") == ("contradiction", "entailment", "neutral")
    assert GLUE_PROCESSORS["rte"].labels("") == ("entailment", "not_entailment")
    assert GLUE_PROCESSORS["cola"].labels("") == ("0", "1")
    assert GLUE_PROCESSORS["stsb"].labels("") is None and GLUE_PROCESSORS["stsb"].is_regression
    assert not GLUE_PROCESSORS["sst2"].is_regression
    assert [
        GLUE_PROCESSORS["mnli"].submission_name(s) for s in ("test_matched", "test_mismatched")
    ] == ["MNLI-m.tsv", "MNLI-mm.tsv"]
    assert GLUE_PROCESSORS["sst2"].submission_name("test") == "SST-2.tsv"
    assert GLUE_PROCESSORS["stsb"].submission_name("test") == "STS-B.tsv"
    assert get_processor("SST-2") is get_processor("sst_2") is GLUE_PROCESSORS["sst2"]


def test_quotes_are_text_in_glue_files():
    # QUOTE_NONE: an unbalanced double quote is part of
    # the sentence, not the start of a quoted field.
    examples = get_processor("sst2").read(str(FIXTURES / "SST-2"), "test")
    assert examples[1].text_a == "it 's a \"mess"
    assert (
        get_processor("cola").read(str(FIXTURES / "CoLA"), "train")[2].text_a
        == 'She said "hello" and left.'
    )


def test_csv_task_reads_named_columns_and_sorted_label_set(tmp_path):
    (tmp_path / "train.csv").write_text(
        'id,review,title,stars\n1,"Great, really great",Fine,5\n'
        '2,"Bad.\nVery bad.",Nope,1\n3,ok,Meh,3\n4,super,Yes,5\n',
        encoding="utf-8",
    )
    (tmp_path / "dev.csv").write_text("id,review,title,stars\n9,meh,Hmm,3\n", encoding="utf-8")
    (tmp_path / "test.csv").write_text("id,review,title\n7,lovely,Wow\n", encoding="utf-8")
    processor = get_processor(
        "csv", text_a_column="review", text_b_column="title", label_column="stars"
    )
    assert processor.labels(str(tmp_path)) == ("1", "3", "5")
    train = processor.read(str(tmp_path), "train")
    assert train[:2] == [
        InputExample("train-0", "Great, really great", "Fine", "5"),
        InputExample("train-1", "Bad.\nVery bad.", "Nope", "1"),
    ]
    assert processor.read(str(tmp_path), "dev") == [InputExample("dev-0", "meh", "Hmm", "3")]
    assert processor.read(str(tmp_path), "test") == [InputExample("test-0", "lovely", "Wow", None)]


def test_tsv_task_single_text(tmp_path):
    (tmp_path / "train.tsv").write_text(
        "text\tlabel\nwarm and kind\tpos\ncold\tneg\n", encoding="utf-8"
    )
    processor = get_processor("tsv", text_a_column="text")
    assert processor.file_name("dev") == "dev.tsv"
    assert processor.labels(str(tmp_path)) == ("neg", "pos")
    assert processor.read(str(tmp_path), "train")[1] == InputExample("train-1", "cold", None, "neg")


def test_tsv_task_reads_quotes_as_text_as_google_research_bert_does(tmp_path):
    # csv.reader(..., quotechar=None): a row may begin with a quote, and a quote ends nothing.
    (tmp_path / "train.tsv").write_text(
        'text\tlabel\n"A" is a letter\tx\n5" screen\ty\n"open\tx\n', encoding="utf-8"
    )
    examples = get_processor("tsv").read(str(tmp_path), "train")
    assert [(e.text_a, e.label) for e in examples] == [
        ('"A" is a letter', "x"),
        ('5" screen', "y"),
        ('"open', "x"),
    ]


def test_csv_task_keeps_standard_quoting(tmp_path):
    (tmp_path / "train.csv").write_text(
        'text,label\n"""A"" is a letter",x\n"two\nlines",y\n', encoding="utf-8"
    )
    examples = get_processor("csv").read(str(tmp_path), "train")
    assert [(e.text_a, e.label) for e in examples] == [
        ('"A" is a letter', "x"),
        ("two\nlines", "y"),
    ]
    (tmp_path / "train.csv").write_text('text,label\n"A" is a letter,x\n', encoding="utf-8")
    with pytest.raises(DataError) as caught:  # a quoted field must be the whole field
        get_processor("csv").read(str(tmp_path), "train")
    assert str(caught.value) == f"{tmp_path}/train.csv:2: malformed row (',' expected after '\"')"


def test_score_labels_are_refused_by_the_classification_task(tmp_path):
    (tmp_path / "train.csv").write_text("text,label\na,0.5\nb,3.25\nc,4\n", encoding="utf-8")
    with pytest.raises(
        DataError,
        match=rf"^{tmp_path}/train.csv: the labels are scores \(0.5, 3.25, 4, \.\.\.\), "
        r"not classes: the csv task classifies",
    ):
        get_processor("csv").labels(str(tmp_path))
    # star ratings: classes
    (tmp_path / "train.csv").write_text("text,label\na,1\nb,3\nc,5\n", encoding="utf-8")
    assert get_processor("csv").labels(str(tmp_path)) == ("1", "3", "5")


@pytest.mark.parametrize(
    "task, text, error",
    [
        (
            "tsv",
            "text\tlabel\na\tb\tpos\n",
            "{dir}/train.tsv:2: malformed TSV row: 3 columns, the header names 2",
        ),
        # A stray quote opening a field: an error, not a field that swallows the next rows.
        (
            "csv",
            'text,label\n"open quote,pos\ncold,neg\n',
            "{dir}/train.csv:2: malformed row (unexpected end of data)",
        ),
    ],
)
def test_user_rows_must_match_the_header(tmp_path, task, text, error):
    (tmp_path / f"train.{task}").write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        get_processor(task).read(str(tmp_path), "train")
    assert str(caught.value) == error.format(dir=tmp_path)


@pytest.mark.parametrize(
    "task, text, split, error",
    [
        (
            "sst2",
            "sentence\tlabel\ngood\t1\nno label here\n",
            "train",
            "{dir}/train.tsv:3: malformed TSV row: 1 tab-separated columns, SST-2 needs at least 2",
        ),
        (
            "sst2",
            "sentence\tlabel\ngood\t1\nbad\tnegative\n",
            "dev",
            "{dir}/dev.tsv:3: label 'negative' is not in the label set 0, 1",
        ),
        (
            "cola",
            "src\t1\t\tfine\nsrc\t1\n",
            "train",
            "{dir}/train.tsv:2: malformed TSV row: 2 tab-separated columns, CoLA needs at least 4",
        ),
        (
            "mnli",
            "header\n0\t1\t2\tg\tp\tp\tp\tp\tA.\tB.\tmaybe\n",
            "train",
            "{dir}/train.tsv:2: label 'maybe' is not in the "
            "label set contradiction, entailment, neutral",
        ),
        (
            "stsb",
            "header\n0\tg\tf\ty\to\ts\ts\tA.\tB.\thigh\n",
            "dev",
            "{dir}/dev.tsv:2: score 'high' is not a number",
        ),
        (
            "stsb",
            "header\n0\tg\tf\ty\to\ts\ts\tA.\tB.\t4.0\n1\tg\tf\ty\to\ts\ts\tC.\tD.\tnan\n",
            "train",
            "{dir}/train.tsv:3: score 'nan' is not a finite number",
        ),
        (
            "stsb",
            "header\n0\tg\tf\ty\to\ts\ts\tA.\tB.\t-inf\n",
            "dev",
            "{dir}/dev.tsv:2: score '-inf' is not a finite number",
        ),
    ],
)
def test_bad_glue_rows_name_file_and_line(tmp_path, task, text, split, error):
    (tmp_path / f"{split}.tsv").write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        get_processor(task).read(str(tmp_path), split)
    assert str(caught.value) == error.format(dir=tmp_path)


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_label_in_the_training_file_is_refused(tmp_path, blank):
    (tmp_path / "train.csv").write_text(f"text,label\na,pos\nb,{blank}\nc,neg\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        get_processor("csv").labels(str(tmp_path))
    assert str(caught.value) == (
        f"{tmp_path}/train.csv:3: empty label in the column 'label' (`label_column`)"
    )


def test_a_test_file_whose_label_column_is_empty_in_every_row_is_unlabelled(tmp_path):
    # As pandas writes unlabelled data that kept its label column; no training file is read.
    (tmp_path / "test.csv").write_text("text,label\nlovely,\nawful, \n", encoding="utf-8")
    assert get_processor("csv").read(str(tmp_path), "test") == [
        InputExample("test-0", "lovely"),
        InputExample("test-1", "awful"),
    ]
    (tmp_path / "train.csv").write_text("text,label\na,pos\nb,neg\n", encoding="utf-8")
    (tmp_path / "test.csv").write_text("text,label\nlovely,pos\nawful,\n", encoding="utf-8")
    # some labels and some not: a mistake, not unlabelled data
    with pytest.raises(DataError) as caught:
        get_processor("csv").read(str(tmp_path), "test")
    assert str(caught.value) == f"{tmp_path}/test.csv:3: label '' is not in the label set neg, pos"


def test_missing_file(tmp_path):
    with pytest.raises(
        DataError, match=f"^{re.escape(str(tmp_path))}/dev_matched.tsv: no such file$"
    ):
        get_processor("mnli").read(str(tmp_path), "dev_matched")


def test_bad_csv_data(tmp_path):
    (tmp_path / "train.csv").write_text("text,label\na,x\nb,y\n", encoding="utf-8")
    processor = get_processor("csv", text_a_column="text")
    (tmp_path / "dev.csv").write_text('text,label\n"multi\nline",x\nc,z\n', encoding="utf-8")
    with pytest.raises(DataError) as caught:
        processor.read(str(tmp_path), "dev")
    assert str(caught.value) == f"{tmp_path}/dev.csv:4: label 'z' is not in the label set x, y"
    (tmp_path / "dev.csv").write_text("text,label\nonly-text\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        processor.read(str(tmp_path), "dev")
    assert (
        str(caught.value)
        == f"{tmp_path}/dev.csv:2: malformed CSV row: 1 columns, the header names 2"
    )
    with pytest.raises(DataError) as caught:
        get_processor("csv", text_a_column="review").read(str(tmp_path), "train")
    assert str(caught.value) == (
        f"{tmp_path}/train.csv:1: no column 'review' (`text_a_column`) in the header text, label"
    )
    with pytest.raises(
        DataError, match="^`task_name`=boolq: unknown task; choose one of cola, mnli"
    ):
        get_processor("boolq")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    texts = [
        e.text_a + " " + (e.text_b or "")
        for task, splits in EXPECTED.items()
        for _, first in splits.values()
        for e in [first]
    ]
    return BertTokenizer(write_word_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt", texts))


def test_encode_pairs_with_label_ids(tokenizer):
    processor = get_processor("mrpc")
    examples = processor.read(str(FIXTURES / "MRPC"), "dev")
    features, labels = encode_examples(tokenizer, examples * 2, processor.labels(""), 16)
    assert {k: (v.dtype, v.shape) for k, v in features.items()} == {
        k: (np.int32, (2, 16)) for k in ("input_word_ids", "input_mask", "input_type_ids")
    }
    tokens = tokenizer.convert_ids_to_tokens(features["input_word_ids"][0])
    assert tokens == [
        "[CLS]",
        "sales",
        "fell",
        "by",
        "ten",
        "percent",
        ".",
        "[SEP]",
        "sales",
        "dropped",
        "10",
        "percent",
        ".",
        "[SEP]",
        "[PAD]",
        "[PAD]",
    ]
    np.testing.assert_array_equal(features["input_type_ids"][0], [0] * 8 + [1] * 6 + [0, 0])
    np.testing.assert_array_equal(features["input_mask"][0], [1] * 14 + [0, 0])
    assert labels.dtype == np.int32 and labels.tolist() == [1, 1]
    # 12 leave 9 tokens for the pair: the longer text loses one, then the second (round robin).
    features, _ = encode_examples(tokenizer, examples, processor.labels(""), 12)
    assert tokenizer.convert_ids_to_tokens(features["input_word_ids"][0]) == [
        "[CLS]",
        "sales",
        "fell",
        "by",
        "ten",
        "percent",
        "[SEP]",
        "sales",
        "dropped",
        "10",
        "percent",
        "[SEP]",
    ]


def test_encode_single_texts_regression_and_unlabeled(tokenizer):
    examples = [
        InputExample("a", "The car is fast.", None, "1"),
        InputExample("b", "Birds sing.", None, "0"),
    ]
    features, labels = encode_examples(tokenizer, examples, ("0", "1"), 5)
    tokens = tokenizer.convert_ids_to_tokens(features["input_word_ids"][0])
    assert tokens == ["[CLS]", "the", "car", "is", "[SEP]"]
    assert features["input_type_ids"].sum() == 0 and labels.tolist() == [1, 0]
    stsb = get_processor("stsb").read(str(FIXTURES / "STS-B"), "dev")
    _, scores = encode_examples(tokenizer, stsb, None, 32)
    assert scores.dtype == np.float32 and scores.tolist() == pytest.approx([4.2, 0.25])
    _, none = encode_examples(
        tokenizer, get_processor("stsb").read(str(FIXTURES / "STS-B"), "test"), None, 32
    )
    assert none is None


XNLI_HEADER = (
    "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
    "sentence2_parse\tsentence1\tsentence2\tpromptID\tpairID\tgenre\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5"
)


def xnli_row(language, label, premise, hypothesis):
    """A row of XNLI-1.0's xnli.dev.tsv / xnli.test.tsv."""
    return "\t".join(
        [
            language,
            label,
            "( a )",
            "( b )",
            "(ROOT a)",
            "(ROOT b)",
            premise,
            hypothesis,
            "7",
            "7e",
            "fiction",
            label,
            label,
            label,
            label,
            label,
        ]
    )


def write_xnli(data_dir, train_rows=None, dev_rows=None, test_rows=None):
    """XNLI's files in `data_dir` (German training data; dev and test in English and German)."""
    train_rows = train_rows or [
        "Der Hund bellt .\tEin Tier ist laut .\tentailment",
        "Es regnet .\tDie Sonne scheint .\tcontradictory",
        'Er sagt "ja .\tEr stimmt zu .\tneutral',
    ]
    dev_rows = dev_rows or [
        xnli_row("en", "entailment", "The dog barks .", "An animal is loud ."),
        xnli_row("de", "neutral", "Sie liest .", "Sie liest ein Buch ."),
        xnli_row("de", "contradiction", "Es ist kalt .", "Es ist heiß ."),
    ]
    test_rows = test_rows or [
        xnli_row("de", "entailment", "Wir essen .", "Wir essen etwas ."),
        xnli_row("fr", "neutral", "Il pleut .", "Il pleut fort ."),
    ]
    (data_dir / "multinli").mkdir(exist_ok=True)
    files = {
        "multinli/multinli.train.de.tsv": ["premise\thypo\tlabel", *train_rows],
        "xnli.dev.tsv": [XNLI_HEADER, *dev_rows],
        "xnli.test.tsv": [XNLI_HEADER, *test_rows],
    }
    for name, lines in files.items():
        (data_dir / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data_dir


def test_xnli_reads_one_language_of_its_files(tmp_path):
    processor = get_processor("xnli", xnli_language="de")
    write_xnli(tmp_path)
    assert processor.read(str(tmp_path), "train") == [
        InputExample("train-0", "Der Hund bellt .", "Ein Tier ist laut .", "entailment"),
        # "contradictory"
        InputExample("train-1", "Es regnet .", "Die Sonne scheint .", "contradiction"),
        InputExample("train-2", 'Er sagt "ja .', "Er stimmt zu .", "neutral"),  # read unquoted
    ]
    assert processor.read(str(tmp_path), "dev") == [  # the English row is skipped
        InputExample("dev-0", "Sie liest .", "Sie liest ein Buch .", "neutral"),
        InputExample("dev-1", "Es ist kalt .", "Es ist heiß .", "contradiction"),
    ]
    assert processor.read(str(tmp_path), "test") == [
        InputExample("test-0", "Wir essen .", "Wir essen etwas .")
    ]


def test_xnli_task_name_language_and_labels():
    # google's language
    assert get_processor("XNLI") == get_processor("xnli") == XnliProcessor("zh")
    processor = get_processor("XNLI", xnli_language="de")
    assert (
        processor.labels("") == ("contradiction", "entailment", "neutral")
        and not processor.is_regression
    )
    assert (processor.eval_splits, processor.predict_splits) == (("dev",), ("test",))
    assert [processor.file_name(s) for s in ("train", "dev", "test")] == [
        "multinli/multinli.train.de.tsv",
        "xnli.dev.tsv",
        "xnli.test.tsv",
    ]


@pytest.mark.parametrize(
    "split, files, error",
    [
        (
            "train",
            dict(train_rows=["A .\tB .\tentailment", "A .\tB .\tcontradicts"]),
            "{dir}/multinli/multinli.train.de.tsv:3: label 'contradicts' is not in the label set "
            "contradiction, entailment, neutral",
        ),
        (
            "train",
            dict(train_rows=["A .\tB ."]),
            "{dir}/multinli/multinli.train.de.tsv:2: malformed TSV "
            "row: 2 tab-separated columns, XNLI needs at least 3",
        ),
        (
            "dev",
            dict(
                dev_rows=[
                    xnli_row("fr", "maybe", "A .", "B ."),
                    xnli_row("de", "maybe", "A .", "B ."),
                ]
            ),
            "{dir}/xnli.dev.tsv:3: label 'maybe' is not in "
            "the label set contradiction, entailment, neutral",
        ),
        (
            "test",
            dict(test_rows=["de\tentailment\t( a )"]),
            "{dir}/xnli.test.tsv:2: malformed TSV row: 3 "
            "tab-separated columns, XNLI needs at least 8",
        ),
        (
            "test",
            dict(
                test_rows=[
                    xnli_row("fr", "neutral", "A .", "B ."),
                    xnli_row("en", "neutral", "A .", "B ."),
                ]
            ),
            "{dir}/xnli.test.tsv: no rows in the language "
            "'de' (`xnli_language`); the file has en, fr",
        ),
    ],
)
def test_bad_xnli_rows_name_file_and_line(tmp_path, split, files, error):
    write_xnli(tmp_path, **files)
    with pytest.raises(DataError) as caught:
        get_processor("xnli", xnli_language="de").read(str(tmp_path), split)
    assert str(caught.value) == error.format(dir=tmp_path)


CHINESE = FIXTURES.parent / "chinese"


@pytest.mark.parametrize(
    "task, options, data, pairs, labels",
    [
        # ChnSentiCorp's layout
        ("tsv", dict(text_a_column="text_a"), "chnsenticorp", False, ("0", "1")),
        # LCQMC's
        ("tsv", dict(text_a_column="text_a", text_b_column="text_b"), "lcqmc", True, ("0", "1")),
        (
            "xnli",
            dict(xnli_language="zh"),
            "xnli",
            True,
            ("contradiction", "entailment", "neutral"),
        ),
    ],
)
def test_chinese_classification_data(task, options, data, pairs, labels):
    """Chinese sentences and pairs: a token a character, the pair's segment ids, XNLI's zh rows."""
    tokenizer = BertTokenizer(str(CHINESE / "vocab.txt"))
    processor = get_processor(task, **options)
    data_dir = str(CHINESE / data)
    assert tuple(processor.labels(data_dir)) == labels
    dev = processor.read(data_dir, "dev")
    if task == "xnli":
        # the en row skipped
        assert [e.text_a for e in dev] == ["许多旅客选择乘坐高铁回家过年。", "活动免费开放。"]
    inputs, label_ids = encode_examples(tokenizer, dev, labels, 32)
    first = dev[0]
    length = len(first.text_a) + (len(first.text_b) if pairs else 0)
    assert inputs["input_mask"][0].sum() == length + (3 if pairs else 2)  # a token a character
    assert inputs["input_type_ids"][0].sum() == (len(first.text_b) + 1 if pairs else 0)
    assert list(label_ids) == [labels.index(e.label) for e in dev]
    test = processor.read(data_dir, "test")
    assert test and all(e.label is None for e in test)
