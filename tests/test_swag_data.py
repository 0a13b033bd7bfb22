"""SWAG CSV reading and encoding: quoted records, shapes, pairs, and errors naming file:line."""

import numpy as np
import pytest

from bert_test_utils import write_file, write_word_vocab
from bert_tf.data import swag
from bert_tf.tokenization import BertTokenizer

HEADER = (
    ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\n"
)
ROWS = (
    '0,anetv_1,5,"A man sits. He","A man sits, then stands up.",He,gold,'
    'walks away.,eats a cake.,sings loudly.,"jumps,\nthen falls.",0\n'  # a record over two lines
    "17,lsmdc_2,9,The girl runs. She,The girl runs.,She,gen,"
    "stops.,waves at us.,smiles.,sits down.,3\n"
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return BertTokenizer(write_word_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt", [ROWS]))


def test_reads_examples_and_quoted_multiline_records(tmp_path):
    examples = swag.read_swag(write_file(tmp_path / "val.csv", HEADER + ROWS))
    assert [e.example_id for e in examples] == ["0", "17"]
    first = examples[0]
    assert first.context == "A man sits, then stands up."
    assert first.choices == [
        "He walks away.",
        "He eats a cake.",
        "He sings loudly.",
        "He jumps,\nthen falls.",
    ]
    assert [e.label for e in examples] == [0, 3]


def test_ids_are_row_numbers_without_the_index_column(tmp_path):
    # Exported with index=False: the first column is video-id, which repeats in SWAG.
    rows = ROWS.replace("0,anetv_1,", "lsmdc_2,").replace("17,lsmdc_2,", "lsmdc_2,")
    examples = swag.read_swag(write_file(tmp_path / "val.csv", HEADER.removeprefix(",") + rows))
    assert [e.example_id for e in examples] == ["0", "1"]
    assert [e.context for e in examples] == ["A man sits, then stands up.", "The girl runs."]


def test_test_file_has_no_labels(tmp_path, tokenizer):
    header = HEADER.replace(",label\n", "\n")
    rows = ROWS.replace(",0\n", "\n").replace(",3\n", "\n")
    examples = swag.read_swag(write_file(tmp_path / "test.csv", header + rows))
    assert [e.label for e in examples] == [None, None]
    features, labels = swag.encode_swag(examples, tokenizer, 16)
    assert labels is None and features["input_word_ids"].shape == (2, 4, 16)


def test_encodes_context_choice_pairs(tmp_path, tokenizer):
    examples = swag.read_swag(write_file(tmp_path / "train.csv", HEADER + ROWS))
    features, labels = swag.encode_swag(examples, tokenizer, seq_length=16)
    assert labels.dtype == np.int32 and labels.tolist() == [0, 3]
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        assert features[name].shape == (2, 4, 16) and features[name].dtype == np.int32
    vocab = tokenizer.vocab
    ids, types = features["input_word_ids"][1, 2], features["input_type_ids"][1, 2]
    tokens = tokenizer.convert_ids_to_tokens(ids[ids != vocab.pad_id])
    assert tokens == ["[CLS]", "the", "girl", "runs", ".", "[SEP]", "she", "smiles", ".", "[SEP]"]
    assert types[:10].tolist() == [0] * 6 + [1] * 4
    # Longer pairs are cut round robin to the sequence length, both segments kept.
    short, _ = swag.encode_swag(examples, tokenizer, seq_length=8)
    assert short["input_mask"].min(axis=-1).tolist() == [[1] * 4, [1] * 4]
    assert (short["input_word_ids"] == vocab.sep_id).sum(axis=-1).tolist() == [[2] * 4, [2] * 4]


@pytest.mark.parametrize(
    "row, message",
    [
        ("5,v,1,s,ctx,start,gold,a,b,c,3\n", "malformed row: 11 fields, the header has 12"),
        ("5,v,1,s,ctx,start,gold,a,b,c,d,4\n", "label 4 is outside 0..3"),
        ("5,v,1,s,ctx,start,gold,a,b,c,d,-1\n", "label -1 is outside 0..3"),
        ("5,v,1,s,ctx,start,gold,a,b,c,d,one\n", "label 'one' is not an integer"),
        ('5,v,1,s,"ctx"x,start,gold,a,b,c,d,1\n', "malformed row (',' expected after '\"')"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, row, message):
    # a blank line, then line 6
    path = write_file(tmp_path / "train.csv", HEADER + ROWS + "\n" + row)
    with pytest.raises(swag.SwagError) as error:
        swag.read_swag(path)
    assert str(error.value) == f"{path}:6: {message}"


def test_header_missing_file_and_bytes_not_utf8(tmp_path):
    path = write_file(tmp_path / "val.csv", HEADER.replace("ending3", "ending_3") + ROWS)
    with pytest.raises(swag.SwagError, match=r"val\.csv:1: header lacks the column\(s\) ending3$"):
        swag.read_swag(path)
    with pytest.raises(swag.SwagError, match=r"nope\.csv: no such file$"):
        swag.read_swag(tmp_path / "nope.csv")
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes((HEADER + ROWS.replace("cake", "g\u00e2teau")).encode("latin-1"))
    with pytest.raises(
        swag.SwagError, match=rf"^{latin1}:2: not UTF-8 \(invalid continuation byte\)$"
    ):
        swag.read_swag(latin1)
