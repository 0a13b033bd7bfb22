"""Chinese news pickles read without running their code; sentences split at 。！？; no repeats."""

import os
import pickle

import pytest

from bert_tf.corpora.chinese_news import (
    ChineseNewsError,
    articles_to_documents,
    load_articles,
    split_sentences,
)


def test_plain_pickles_load():
    data = pickle.dumps((["标题"], ["今天下雨。明天晴！"], [1]))
    assert load_articles(data) == ["今天下雨。明天晴！"]


def test_pickled_code_is_refused():
    class Payload:  # what a hostile pickle does: call a function on load
        def __reduce__(self):
            return os.system, ("echo pwned",)

    with pytest.raises(ChineseNewsError, match="refused to load the global posix.system"):
        load_articles(pickle.dumps(([], [Payload()], [])))


@pytest.mark.parametrize(
    "value", [(["t"], ["c"]), (["t"], ["c"], ["1"]), (["t"], [b"c"], [1]), ([], ["c"], [])]
)
def test_other_shapes_are_refused(value):
    with pytest.raises(ChineseNewsError):
        load_articles(pickle.dumps(value))


def test_sentences_end_after_full_stops_and_closing_quotes():
    text = "他说：“你好。”然后走了！真的吗？是的!\n\u3000\u3000下一段。。。结尾没有句号"
    assert split_sentences(text) == [
        "他说：“你好。”",
        "然后走了！",
        "真的吗？",
        "是的!",
        "下一段。。。",
        "结尾没有句号",
    ]


def test_repeated_articles_kept_once_in_order():
    articles = ["甲。乙。", "丙！", " 甲。乙。\n", "", "丙！"]
    assert articles_to_documents(articles) == [["甲。", "乙。"], ["丙！"]]
