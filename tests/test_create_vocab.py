"""create_vocab.py: a WordPiece vocab learned from a small real corpus, and its errors."""

import re

import pytest
from absl import flags

from bert_test_utils import REPO, assert_fails_with_line, run_script, write_file
from bert_tf.data import cli, vocab_learner
from bert_tf.data.flags import define_create_vocab_flags
from bert_tf.tokenization import SPECIAL_TOKENS, BertTokenizer, unicode_tables


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, wikipedia_sample_lines):
    text = "\n".join(wikipedia_sample_lines[:150]) + "\n"
    return write_file(tmp_path_factory.mktemp("corpus") / "corpus.txt", text)


def test_create_vocab_script(corpus, tmp_path):
    output = tmp_path / "vocab.txt"
    result = run_script(
        "create_vocab.py",
        f"--input_file={corpus}",
        f"--output_file={output}",
        "--vocab_size=200",
        "--num_unused=3",
    )
    assert result.returncode == 0, result.stderr
    tokens = output.read_text(encoding="utf-8").split("\n")
    assert tokens.pop() == ""
    assert tokens[:8] == list(SPECIAL_TOKENS) + ["[unused0]", "[unused1]", "[unused2]"]
    assert 150 < len(tokens) <= 200 and len(set(tokens)) == len(tokens)
    assert all(token == token.lower() for token in tokens[8:])
    tokenizer = BertTokenizer(output)
    lines = corpus.read_text(encoding="utf-8").split("\n")
    ids = tokenizer.tokenize(lines).flat_values.numpy()
    assert (ids == tokenizer.vocab.unk_id).mean() < 0.01  # every common character is a piece
    assert any(len(tokenizer.vocab.tokens[i].removeprefix("##")) > 1 for i in ids)  # learned pieces


def test_cased_vocab_keeps_case(corpus, tmp_path):
    tokens = vocab_learner.create_vocab(
        str(corpus), tmp_path / "vocab.txt", 200, do_lower_case=False
    )
    assert tokens[:5] == list(SPECIAL_TOKENS)
    assert any(token != token.lower() for token in tokens[5:])
    BertTokenizer(tmp_path / "vocab.txt", do_lower_case=False)


def test_words_are_counted_with_literal_special_tokens_split(tmp_path):
    path = write_file(tmp_path / "corpus.txt", "Hello [SEP] world [MASK].\n")
    assert vocab_learner.count_words([str(path)], do_lower_case=True) == {
        "hello": 1,
        "[": 2,
        "sep": 1,
        "]": 2,
        "world": 1,
        "mask": 1,
        ".": 1,
    }


def test_a_vocab_learned_over_the_size_is_cut_to_it(tmp_path):
    # 100 words of the same count: the learner keeps all of them or none, 125 tokens or 25.
    words = [a + b for a in "abcdefghij" for b in "abcdefghij"]
    corpus = write_file(tmp_path / "corpus.txt", "\n".join([" ".join(words)] * 20) + "\n")
    tokens = vocab_learner.create_vocab(str(corpus), tmp_path / "vocab.txt", 60)
    assert len(tokens) == 60
    # every character kept
    assert set(list("abcdefghij") + [f"##{c}" for c in "abcdefghij"]) < set(tokens)
    tokenizer = BertTokenizer(tmp_path / "vocab.txt")
    assert tokenizer.vocab.unk_id not in tokenizer.tokenize(words).flat_values.numpy()


def test_every_character_is_kept_past_the_learners_default_1000(tmp_path):
    # 1,500 distinct CJK characters, each its own word; tensorflow-text keeps 1,000 by default.
    # Their ## copies are kept on request, so every character counts twice.
    chars = [chr(0x4E00 + i) for i in range(1500)]
    corpus = write_file(
        tmp_path / "corpus.txt", "\n".join("".join(chars[i : i + 50]) for i in range(0, 1500, 50))
    )
    tokens = vocab_learner.learn_vocab([str(corpus)], 3005, keep_cjk_suffix_pieces=True)
    assert set(chars) | {f"##{c}" for c in chars} <= set(tokens) and len(tokens) == 3005
    with pytest.raises(
        ValueError,
        match=r"^`vocab_size`=3004 is too small for this corpus: the "
        r"smallest vocab it can learn has 3005 tokens \(its 1500 "
        r"characters",
    ):
        vocab_learner.learn_vocab([str(corpus)], 3004, keep_cjk_suffix_pieces=True)


def test_errors_are_one_line_and_write_nothing(corpus, tmp_path):
    output = tmp_path / "vocab.txt"
    result = run_script(
        "create_vocab.py", f"--input_file={tmp_path}/missing*.txt", f"--output_file={output}"
    )
    assert_fails_with_line(
        result, f"create_vocab.py: error: --input_file: no file matches {tmp_path}/missing*.txt"
    )
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n\t\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=r"^`input_file`: the corpus is empty \(1 files without "
        r"text\)$",
    ):
        vocab_learner.create_vocab(str(empty), output, 100)
    controls = tmp_path / "controls.txt"
    controls.write_text("\u0001\u0002\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^`input_file`: no words in .*controls.txt$"):
        vocab_learner.create_vocab(str(controls), output, 100)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("fine\ncaf\u00e9\n".encode("latin-1"))
    with pytest.raises(
        ValueError, match=r"^1 input lines are not valid UTF-8 \(first: .*latin1.txt line 2\)$"
    ):
        vocab_learner.create_vocab(str(latin1), output, 100)
    with pytest.raises(ValueError, match=rf"^{tmp_path}: a directory, not a corpus file$"):
        vocab_learner.create_vocab(str(tmp_path), output, 100)
    with pytest.raises(
        ValueError,
        match=r"^`vocab_size`=6 leaves no room after the 6 reserved "
        r"tokens$",
    ):
        vocab_learner.create_vocab(str(corpus), output, 6, num_unused=1)
    with pytest.raises(
        ValueError,
        match=r"^`vocab_size`=20 is too small for this corpus: the "
        r"smallest vocab it can learn has (1\d\d) tokens \(its "
        r"(\d+) characters, those but CJK also as a ## piece, and "
        r"5 reserved tokens\); use `vocab_size`=\1 or "
        r"more$",
    ) as error:
        vocab_learner.create_vocab(str(corpus), output, 20)
    smallest, chars = map(
        int, re.search(r"has (\d+) tokens \(its (\d+)", str(error.value)).groups()
    )
    assert smallest == 2 * chars + 5
    # that size can be had
    assert len(vocab_learner.learn_vocab([str(corpus)], smallest)) == smallest
    with pytest.raises(ValueError, match=r"^`output_file`: no directory .*missing$"):
        vocab_learner.create_vocab(str(corpus), tmp_path / "missing" / "vocab.txt", 100)
    assert sorted(tmp_path.iterdir()) == sorted([empty, controls, latin1])


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--output_file=OUT", "stray"], "unexpected arguments: stray"),
        (["--output_file=CORPUS/vocab.txt"], "--output_file: no directory CORPUS"),
        (["--output_file=CORPUS"], "--output_file: CORPUS is also an --input_file"),
        (["--output_file=TMP"], "--output_file: TMP is a directory"),
    ],
)
def test_main_reports_one_line_errors(corpus, tmp_path, capsys, argv, message):
    flag_values = flags.FlagValues()
    define_create_vocab_flags(flag_values)

    def fill(text):
        for name, path in {
            "OUT": tmp_path / "vocab.txt",
            "CORPUS": corpus,
            "TMP": tmp_path,
        }.items():
            text = text.replace(name, str(path))
        return text

    text = corpus.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        cli.create_vocab_main(
            flag_values(["create_vocab.py", f"--input_file={corpus}", *map(fill, argv)]),
            flag_values,
        )
    assert exit_.value.code == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"create_vocab.py: error: {fill(message)}"
    ]
    assert list(tmp_path.iterdir()) == [] and corpus.read_bytes() == text


CHINESE_NEWS = REPO / "tests" / "fixtures" / "chinese" / "news.txt"


def test_chinese_vocab_keeps_cjk_characters_whole_only(tmp_path):
    """Real mixed Chinese text: each CJK character once, no ## copy (the tokenizer never uses one);
    other characters still have theirs; nothing tokenizes to [UNK]."""
    lines = CHINESE_NEWS.read_text(encoding="utf-8").split("\n")
    tokens = vocab_learner.create_vocab(str(CHINESE_NEWS), tmp_path / "vocab.txt", 700)
    cjk = {c for line in lines for c in line if unicode_tables.is_cjk_char(c)}
    assert len(cjk) > 250 and cjk <= set(tokens)
    assert not [
        t for t in tokens if unicode_tables.is_cjk_char(t.removeprefix("##")) and t.startswith("##")
    ]
    assert {"##e", "##t", "##２"} <= set(tokens)  # from "bert", "english", "９２"
    tokenizer = BertTokenizer(tmp_path / "vocab.txt")
    assert tokenizer.vocab.unk_id not in tokenizer.tokenize(lines).flat_values.numpy()
    kept = vocab_learner.create_vocab(
        str(CHINESE_NEWS), tmp_path / "kept.txt", 700, keep_cjk_suffix_pieces=True
    )
    assert {f"##{c}" for c in cjk} <= set(kept)


def test_smallest_chinese_vocab_counts_no_cjk_suffix_pieces(tmp_path):
    path = write_file(tmp_path / "corpus.txt", "中文ab\n")  # 中, 文, a, ##a, b, ##b and 5 reserved
    with pytest.raises(ValueError, match=r"use `vocab_size`=11 or more$"):
        vocab_learner.create_vocab(str(path), tmp_path / "vocab.txt", 10)
    assert vocab_learner.create_vocab(str(path), tmp_path / "vocab.txt", 11)[5:] == [
        "a",
        "b",
        "中",
        "文",
        "##a",
        "##b",
    ]
