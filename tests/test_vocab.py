"""Vocab files: lines stripped as google-research/bert does, duplicates refused with their lines."""

import pytest

from bert_test_utils import write_file
from bert_tf.tokenization import BertTokenizer, Vocab, VocabError

SPECIAL = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"


def test_lines_are_stripped_as_google_research_bert_reads_them(tmp_path):
    path = write_file(
        tmp_path / "vocab.txt", SPECIAL.replace("[CLS]", "[CLS] \t") + "the  \r\n##s\n"
    )
    vocab = Vocab.from_file(path)
    assert vocab.tokens[2] == "[CLS]" and vocab.cls_id == 2
    assert vocab.token_to_id["the"] == 5
    assert BertTokenizer(str(path)).tokenize(["the"]).to_list() == [[5]]


def test_a_duplicate_token_names_both_lines(tmp_path):
    path = write_file(tmp_path / "vocab.txt", SPECIAL + "the\nend\nthe\n")
    with pytest.raises(VocabError, match=r"vocab\.txt:8: 'the' is already on line 6$"):
        Vocab.from_file(path)
