"""Hostile corpora: a file that is not text fails at once, and an
enormous line is split with one warning, in bounded memory (peak RSS of
a child process measured against the same script on a tiny corpus)."""

import os
import pathlib
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_test_utils import REPO, write_word_vocab
from bert_tf.data import corpus, dynamic_masking
from bert_tf.tokenization import BertTokenizer

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "glue"
CAP = corpus.MAX_LINE_BYTES


def fixture_text() -> str:
    """Real sentences: the GLUE fixtures' text, on one line."""
    return " ".join(
        path.read_text(encoding="utf-8").replace("\t", " ").replace("\n", " ")
        for path in sorted(FIXTURES.glob("*/train.tsv"))
    )


def long_line(num_bytes: int) -> str:
    text = fixture_text()
    return (text * (num_bytes // len(text) + 1))[:num_bytes].strip()


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    return write_word_vocab(tmp_path_factory.mktemp("vocab") / "vocab.txt", [fixture_text()])


def test_a_long_line_is_split_after_a_space_or_between_characters_into_lines_under_the_cap():
    english, chinese = long_line(3 * CAP), "中文句子。" * CAP  # the Chinese line has no space
    lines = corpus.split_long_lines(tf.constant(["short", "", english, "   ", chinese])).numpy()
    pieces = [line.decode("utf-8") for line in lines]
    assert pieces[:2] == ["short", ""] and "   " in pieces  # short and blank lines kept as they are
    assert max(len(line) for line in lines) < CAP
    english_pieces = pieces[2 : pieces.index("   ")]
    assert len(english_pieces) >= 3 and " ".join(english_pieces).split() == english.split()
    assert "".join(pieces[pieces.index("   ") + 1 :]) == chinese


def test_long_lines_get_one_warning_naming_the_first_and_are_read_split(tmp_path, caplog):
    path = tmp_path / "corpus.txt"
    line = long_line(2 * CAP + 100)
    # the last one without \n
    path.write_text(f"a short line\n\n{line}\nanother\n{line}", encoding="utf-8")
    chunks = corpus.plan_chunks([str(path)], 1 << 20)
    warnings = [r.getMessage() for r in caplog.records if "longer than" in r.getMessage()]
    assert warnings == [
        f"2 input lines are longer than {CAP} bytes (first: {path} line 3): each is read "
        "as several lines, split at a space or a sentence end"
    ]
    lines = corpus.read_chunk(chunks[0])
    assert lines[:2] == ["a short line", ""] and "another" in lines
    assert len(lines) >= 2 + 3 + 1 + 3 and max(len(text.encode()) for text in lines) < CAP
    assert " ".join(lines[2 : lines.index("another")]).split() == line.split()


@pytest.mark.parametrize("content", [b"a line\nand a NUL\x00 byte\n", None])
def test_a_file_with_a_nul_byte_is_not_text(tmp_path, content):
    path = "/dev/zero" if content is None else str(tmp_path / "binary.txt")  # /dev/zero has no end
    if content is not None:
        pathlib.Path(path).write_bytes(content)
    with pytest.raises(corpus.CorpusError) as error:
        corpus.check_corpus([path])
    assert (
        str(error.value)
        == f"{path} line {1 if content is None else 2}: a NUL byte; this is not a text file"
    )


def test_the_dynamic_masking_stream_reads_a_long_line_as_several_sentences(tmp_path, vocab_file):
    path = tmp_path / "corpus.txt"
    path.write_text(long_line(3 * CAP) + "\n", encoding="utf-8")
    pairs_of_block = dynamic_masking._pairs_function(
        BertTokenizer(vocab_file), segment_tokens=62, words=None
    )
    stream = dynamic_masking._segment_stream([str(path)], pairs_of_block, None, None, endless=False)
    segments = [len(segment) for segment, _, _ in stream]
    # A sentence longer than a segment is one: the line, unsplit, would be one segment.
    assert len(segments) >= 3 and max(segments) < CAP


def peak_rss_mb(tmp_path, *flags: str) -> tuple[int, str, float]:
    """(exit status, stderr, peak resident MB) of create_pretraining_data.py run on `flags`."""
    with open(tmp_path / "stderr.txt", "w+") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(REPO / "create_pretraining_data.py"), *flags],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        # this child's own peak, not that of any child before it
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        return process.returncode, stderr.read(), usage.ru_maxrss / 1024


@pytest.fixture(scope="module")
def baseline_mb(tmp_path_factory, vocab_file):
    """The script's peak on a tiny corpus: TensorFlow, the tokenizer, the runtime."""
    tmp_path = tmp_path_factory.mktemp("baseline")
    (tmp_path / "corpus.txt").write_text(long_line(3000) + "\n", encoding="utf-8")
    code, stderr, peak = peak_rss_mb(
        tmp_path,
        f"--input_file={tmp_path / 'corpus.txt'}",
        f"--vocab_file={vocab_file}",
        f"--output_file={tmp_path / 'out.tfrecord'}",
        "--num_workers=1",
    )
    assert code == 0, stderr[-2000:]
    return peak


def test_a_100_mb_nul_file_fails_at_once_in_bounded_memory(tmp_path, vocab_file, baseline_mb):
    path = tmp_path / "zeros.txt"
    with open(path, "wb") as f:
        f.truncate(100 << 20)  # 100 MB of NUL bytes
    code, stderr, peak = peak_rss_mb(
        tmp_path,
        f"--input_file={path}",
        f"--vocab_file={vocab_file}",
        f"--output_file={tmp_path / 'out.tfrecord'}",
    )
    assert (code, stderr.strip().splitlines()[-1]) == (
        1,
        f"create_pretraining_data.py: error: {path} line 1: a NUL byte; this is not a text file",
    )
    assert peak < baseline_mb + 100  # one block of the file is read (16 MB), not the file
    assert not (tmp_path / "out.tfrecord").exists()


def test_a_50_mb_line_is_split_in_bounded_memory(tmp_path, vocab_file, baseline_mb):
    path = tmp_path / "line.txt"
    path.write_text(long_line(50_000_000) + "\n", encoding="utf-8")
    code, stderr, peak = peak_rss_mb(
        tmp_path,
        f"--input_file={path}",
        f"--vocab_file={vocab_file}",
        f"--output_file={tmp_path / 'out.tfrecord'}",
        "--num_workers=1",
        "--dupe_factor=1",
    )
    assert code == 0, stderr[-2000:]
    assert (
        f"1 input lines are longer than {CAP} bytes (first: {path} line 1): each is read as "
        "several lines, split at a space or a sentence end"
    ) in stderr
    # Without the split: one sentence of 12M tokens, one
    # example per dupe and 1.3 GB more than the baseline.
    examples = sum(1 for _ in tf.data.TFRecordDataset(str(tmp_path / "out.tfrecord")))
    assert examples > 500
    assert peak < baseline_mb + 600, (peak, baseline_mb)
