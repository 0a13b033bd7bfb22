"""create_pretraining_data.py: determinism, Model Garden interop, bad input, killed runs."""

import itertools
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from bert_test_utils import REPO, assert_fails_with_line, run_script, write_file, write_word_vocab
from bert_tf.bert_config import ConfigError
from bert_tf.data import cli, corpus, pretraining_features
from bert_tf.data import pretraining_data_generator as generator
from bert_tf.data.flags import define_create_pretraining_data_flags
from bert_tf.tokenization import Vocab, VocabError

SEQ, PREDICTIONS = 64, 10


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, wikipedia_sample_lines):
    """The first ~3,000 lines of the Wikipedia sample, ending at a document break."""
    lines = wikipedia_sample_lines[: wikipedia_sample_lines.index("", 3000)]
    return str(write_file(tmp_path_factory.mktemp("corpus") / "wiki.txt", "\n".join(lines) + "\n"))


def read_records(pattern):
    dataset = (
        tf.data.TFRecordDataset(sorted(tf.io.gfile.glob(pattern)))
        .batch(100_000)
        .map(lambda s: pretraining_features.parse_examples(s, SEQ, PREDICTIONS))
    )
    return {name: value.numpy() for name, value in next(iter(dataset)).items()}


def check_examples(features, vocab):
    """Schema-level checks that hold for any generator's output."""
    ids, mask = features["input_ids"], features["input_mask"]
    lengths = mask.sum(1)
    assert ids.shape[1] == SEQ and np.all(ids[:, 0] == vocab.cls_id)
    assert np.all(ids[np.arange(len(ids)), lengths - 1] == vocab.sep_id)
    assert np.all(mask[:, :-1] >= mask[:, 1:])  # real tokens, then padding
    weights = features["masked_lm_weights"] > 0
    assert np.all(weights.sum(1) >= 1)
    assert not np.isin(features["masked_lm_ids"][weights], [vocab.cls_id, vocab.sep_id]).any()
    assert set(np.unique(features["next_sentence_labels"])) == {0, 1}


def test_shards_identical_for_any_num_workers(tmp_path, small_corpus, uncased_vocab_file):
    outputs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}" / "data.tfrecord"  # the script makes the folder
        result = run_script(
            "create_pretraining_data.py",
            f"--input_file={small_corpus}",
            f"--output_file={out}",
            "--num_output_shards=3",
            f"--vocab_file={uncased_vocab_file}",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}",
            "--dupe_factor=2",
            "--chunk_mb=0.1",
            f"--num_workers={workers}",
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert "examples from" in result.stdout and "masked fraction" in result.stdout
        outputs.append(sorted(out.parent.iterdir()))
    assert [p.name for p in outputs[0]] == [f"data.tfrecord-0000{i}-of-00003" for i in range(3)]
    for ours_1, ours_2 in zip(*outputs):
        assert ours_1.read_bytes() == ours_2.read_bytes()
    features = read_records(str(outputs[0][0].parent / "*"))
    check_examples(features, Vocab.from_file(uncased_vocab_file))
    sizes = [len(list(tf.data.TFRecordDataset(str(p)))) for p in outputs[0]]
    assert max(sizes) - min(sizes) <= 1  # round-robin over the shards


def test_model_garden_loader_reads_our_files(tmp_path, small_corpus, uncased_vocab_file):
    from official.nlp.data.pretrain_dataloader import BertPretrainDataConfig, BertPretrainDataLoader

    options = generator.PretrainingDataOptions(
        vocab_file=uncased_vocab_file,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=1,
    )
    path = str(tmp_path / "ours.tfrecord")
    stats = generator.create_pretraining_data([small_corpus], [path], options, progress=False)
    config = BertPretrainDataConfig(
        input_path=path,
        seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        global_batch_size=8,
        is_training=False,
    )
    batch = next(iter(BertPretrainDataLoader(config).load()))
    ours = read_records(path)
    np.testing.assert_array_equal(batch["input_word_ids"].numpy(), ours["input_ids"][:8])
    np.testing.assert_array_equal(batch["input_type_ids"].numpy(), ours["segment_ids"][:8])
    np.testing.assert_array_equal(
        batch["masked_lm_positions"].numpy(), ours["masked_lm_positions"][:8]
    )
    np.testing.assert_array_equal(
        batch["next_sentence_labels"].numpy()[:, 0], ours["next_sentence_labels"][:8]
    )
    assert stats.examples == len(ours["input_ids"])
    assert (
        abs(stats.masked_fraction - ours["masked_lm_weights"].sum() / ours["input_mask"].sum())
        < 1e-9
    )


def test_we_read_model_garden_files(tmp_path, small_corpus, uncased_vocab_file):
    path = tmp_path / "peer.tfrecord"
    result = run_script(
        "official.nlp.data.create_pretraining_data",
        f"--input_file={small_corpus}",
        f"--output_file={path}",
        f"--vocab_file={uncased_vocab_file}",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--dupe_factor=1",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    features = read_records(str(path))
    assert features["input_ids"].dtype == np.int32 and features["next_sentence_labels"].ndim == 1
    check_examples(features, Vocab.from_file(uncased_vocab_file))


# Bad input: a one-line error naming the file or flag, and no output file left behind.


def create(tmp_path, inputs, vocab_file, **overrides):
    config = overrides.pop("bert_config_file", None)
    options = generator.PretrainingDataOptions(vocab_file=vocab_file, **overrides)
    generator.create_pretraining_data(
        inputs, [str(tmp_path / "out.tfrecord")], options, bert_config_file=config, progress=False
    )


def assert_no_output(tmp_path):
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("out")]


def test_missing_input_file(tmp_path):
    with pytest.raises(
        corpus.CorpusError,
        match=r"^`input_file`: no file matches "
        r".*/nothing\*\.txt$",
    ):
        corpus.expand_input_files(f"{tmp_path}/nothing*.txt")


def test_input_globs_expand_in_flag_order_without_repeats(tmp_path):
    a, b = str(write_file(tmp_path / "a.txt", b"x\n")), str(write_file(tmp_path / "b.txt", b"y\n"))
    assert corpus.expand_input_files(f" {b} ,{tmp_path}/*.txt,") == [b, a]
    with pytest.raises(corpus.CorpusError, match=r"^`eval_file`: no file matches .*/typo\*$"):
        corpus.expand_input_files(f"{a},{tmp_path}/typo*", flag="eval_file")
    with pytest.raises(corpus.CorpusError, match=r"^`input_file`: no input file given$"):
        corpus.expand_input_files(" , ")


def test_wildcards_skip_hidden_names_as_a_shell_does(tmp_path):
    """A killed run's hidden temporary (`.a.txt.tmp-…`) is no input of `dir/*`, but can be named."""
    a, hidden = (
        str(write_file(tmp_path / "a.txt", b"x\n")),
        str(write_file(tmp_path / ".a.txt.tmp-1a2b3c4d", b"x")),
    )
    assert corpus.expand_input_files(f"{tmp_path}/*") == [a]
    assert corpus.expand_input_files(f"{tmp_path}/.a.txt.tmp-*") == [hidden]
    with pytest.raises(corpus.CorpusError, match=r"^`input_file`: no file matches .*/\*\.tmp-\*$"):
        corpus.expand_input_files(f"{tmp_path}/*.tmp-*")


def chunk_documents(chunk):
    """The documents of `chunk`, as lists of lines (blank lines end documents)."""
    runs = itertools.groupby(corpus.read_chunk(chunk), key=lambda line: line == "")
    return [list(lines) for blank, lines in runs if not blank]


def test_chunks_span_files_and_never_split_a_document(tmp_path):
    # 24 bytes, two documents
    a = str(write_file(tmp_path / "a.txt", b"a one.\na two.\n\na three.\n"))
    b = str(write_file(tmp_path / "b.txt", b"b one."))  # no final newline: the file's end ends it
    c = str(write_file(tmp_path / "c.txt", b"c one.\nc two.\n\nc three.\n"))
    every_document = [
        ["a one.", "a two."],
        ["a three."],
        ["b one."],
        ["c one.", "c two."],
        ["c three."],
    ]

    # a (24 bytes) does not fill 26 bytes: the chunk
    # goes on into b; c, less than 26 bytes, joins it.
    (chunk,) = corpus.plan_chunks([a, b, c], 26)
    assert chunk.spans == (
        corpus.FileSpan(a, 0, 24),
        corpus.FileSpan(b, 0, 6),
        corpus.FileSpan(c, 0, 24),
    )
    assert chunk_documents(chunk) == every_document
    # A chunk per document once each is longer than the chunk size: cut at the blank lines.
    chunks = corpus.plan_chunks([a, b, c], 1)
    assert [chunk_documents(chunk) for chunk in chunks] == [
        [document] for document in every_document
    ]
    assert [chunk.index for chunk in chunks] == list(range(5))


def test_random_next_sentences_come_from_other_files_of_one_document_each(tmp_path):
    """A corpus of one document per file: every random next sentence (label 1) is from another
    document, and every actual next sentence from the same one."""
    words = ["apple", "zebra", "guitar", "ocean"]
    files = [
        str(
            write_file(
                tmp_path / f"{word}.txt", "".join(f"{word} {word} {word} .\n" for _ in range(8))
            )
        )
        for word in words
    ]
    vocab = Vocab.from_file(write_word_vocab(tmp_path / "vocab.txt", words + ["."]))
    options = generator.PretrainingDataOptions(
        vocab_file=vocab.path,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=10,
    )
    generator.create_pretraining_data(
        files, [str(tmp_path / "out.tfrecord")], options, progress=False
    )
    features = read_records(str(tmp_path / "out.tfrecord"))
    word_ids = {vocab.token_to_id[word] for word in words}
    labels = {0: [], 1: []}
    for i, label in enumerate(features["next_sentence_labels"]):
        row, predicted = features["input_ids"][i].copy(), features["masked_lm_weights"][i] > 0
        # unmasked
        row[features["masked_lm_positions"][i][predicted]] = features["masked_lm_ids"][i][predicted]
        first_sep, second_sep = np.flatnonzero(row == vocab.sep_id)[:2]
        a_words, b_words = (
            (word_ids & set(row[1:first_sep])),
            (word_ids & set(row[first_sep + 1 : second_sep])),
        )
        assert len(a_words) == len(b_words) == 1
        labels[int(label)].append(a_words == b_words)
    assert labels[1] and not any(labels[1])
    assert labels[0] and all(labels[0])


def test_chunks_of_a_single_document_are_reported(tmp_path, uncased_vocab_file, caplog):
    long_document = "".join(f"sentence number {i} of the long document.\n" for i in range(40))
    files = [
        str(write_file(tmp_path / "long.txt", long_document)),
        str(
            write_file(
                tmp_path / "short.txt",
                "".join(f"short document {i}.\nits end.\n\n" for i in range(10)),
            )
        ),
    ]
    options = generator.PretrainingDataOptions(vocab_file=uncased_vocab_file, dupe_factor=1)
    generator.create_pretraining_data(
        files, [str(tmp_path / "out.tfrecord")], options, chunk_bytes=200, progress=False
    )
    assert (
        "1 of the 2 chunks hold a single document, longer than --chunk_mb: their random next "
        "sentences come from that same document (raise --chunk_mb)"
    ) in caplog.text


def test_missing_vocab_and_vocab_without_special_tokens(tmp_path, small_corpus):
    with pytest.raises(VocabError, match=r"missing\.txt: no such vocab file$"):
        create(tmp_path, [small_corpus], str(tmp_path / "missing.txt"))
    vocab = str(write_file(tmp_path / "vocab.txt", b"[PAD]\n[UNK]\nthe\n"))
    with pytest.raises(
        VocabError, match=r"vocab\.txt: vocab lacks the special tokens \[CLS\] \[SEP\] \[MASK\]$"
    ):
        create(tmp_path, [small_corpus], vocab)
    assert_no_output(tmp_path)


def test_empty_corpus(tmp_path, uncased_vocab_file):
    blank = str(write_file(tmp_path / "blank.txt", b"\n  \n\n"))
    with pytest.raises(
        corpus.CorpusError,
        match=r"^`input_file`: the corpus is empty \(1 files "
        r"without text\)$",
    ):
        create(tmp_path, [blank], uncased_vocab_file)
    assert_no_output(tmp_path)


def test_corpus_without_tokens_leaves_no_partial_shard(tmp_path, uncased_vocab_file):
    controls = str(write_file(tmp_path / "controls.txt", "\u0001\u0002\n\n\u0003\n".encode()))
    with pytest.raises(
        corpus.CorpusError, match=r"^the corpus has no tokens: 1 input files, no example$"
    ):
        create(tmp_path, [controls], uncased_vocab_file)
    assert_no_output(tmp_path)


def test_a_failed_run_removes_the_output_directories_it_created(tmp_path, uncased_vocab_file):
    controls = str(write_file(tmp_path / "controls.txt", "\u0001\u0002\n\n\u0003\n".encode()))
    (tmp_path / "existing").mkdir()
    outputs = [
        str(tmp_path / "new" / "deeper" / "a.tfrecord"),
        str(tmp_path / "new" / "b.tfrecord"),
        str(tmp_path / "existing" / "sub" / "c.tfrecord"),
    ]
    options = generator.PretrainingDataOptions(vocab_file=uncased_vocab_file)
    with pytest.raises(corpus.CorpusError, match=r"^the corpus has no tokens"):
        generator.create_pretraining_data([controls], outputs, options, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["controls.txt", "existing"]
    assert not any((tmp_path / "existing").iterdir())


def test_invalid_utf8_lines_are_counted(tmp_path, uncased_vocab_file):
    good = str(write_file(tmp_path / "good.txt", b"fine text.\n\nmore text.\n"))
    bad = str(
        write_file(tmp_path / "bad.txt", b"ok line\n\xff\xfe broken\n\nok\nalso \xc3 broken\n")
    )
    with pytest.raises(
        corpus.CorpusError,
        match=r"^2 input lines are not valid UTF-8 \(first: .*bad\.txt line 2\)$",
    ):
        create(tmp_path, [good, bad], uncased_vocab_file)
    assert_no_output(tmp_path)


@pytest.mark.parametrize(
    "flags,message",
    [
        (
            dict(max_predictions_per_seq=20, max_seq_length=512),
            r"^`max_predictions_per_seq`=20 is too small for `masked_lm_prob`=0.15: a sequence of "
            r"`max_seq_length`=512 has 77 predictions; use 77 to 512$",
        ),
        (
            dict(max_seq_length=1024, max_predictions_per_seq=154),
            r"^`max_seq_length`=1024 is greater than 512: pass the model's `bert_config_file`",
        ),
        (
            dict(max_predictions_per_seq=200),
            r"^`max_predictions_per_seq`=200 is greater than `max_seq_length`=128: use 19 to 128$",
        ),
        (dict(max_seq_length=4), r"^`max_seq_length`=4: must be at least 5"),
    ],
)
def test_bad_flags(tmp_path, small_corpus, uncased_vocab_file, flags, message):
    with pytest.raises(generator.PretrainingDataError, match=message):
        create(tmp_path, [small_corpus], uncased_vocab_file, **flags)
    assert_no_output(tmp_path)


def test_max_seq_length_against_bert_config(tmp_path, small_corpus, uncased_vocab_file):
    config = REPO / "configs" / "tiny" / "bert_config.json"
    message = (
        r"^`max_seq_length`=1024 is greater than max_position_embeddings=512 of "
        r"`bert_config_file`=.*tiny/bert_config.json$"
    )
    with pytest.raises(generator.PretrainingDataError, match=message):
        create(
            tmp_path,
            [small_corpus],
            uncased_vocab_file,
            max_seq_length=1024,
            max_predictions_per_seq=154,
            bert_config_file=str(config),
        )
    with pytest.raises(ConfigError, match=r"nope\.json: no such config file$"):
        create(
            tmp_path,
            [small_corpus],
            uncased_vocab_file,
            bert_config_file=str(tmp_path / "nope.json"),
        )
    assert_no_output(tmp_path)


def test_script_reports_one_line_error_and_fails(tmp_path, uncased_vocab_file):
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={tmp_path}/none.txt",
        f"--output_file={tmp_path}/out.tfrecord",
        f"--vocab_file={uncased_vocab_file}",
    )
    assert_fails_with_line(
        result,
        f"create_pretraining_data.py: error: --input_file: no file matches {tmp_path}/none.txt",
    )
    assert_no_output(tmp_path)


def test_num_output_shards_names_the_shards_of_one_output_file(tmp_path):
    assert generator.output_paths("out.tfrecord", 1) == ["out.tfrecord-00000-of-00001"]
    assert generator.output_paths("out.tfrecord", 2) == [
        "out.tfrecord-00000-of-00002",
        "out.tfrecord-00001-of-00002",
    ]
    assert generator.output_paths("a.tfrecord, b.tfrecord", 2) == ["a.tfrecord", "b.tfrecord"]
    assert generator.output_paths("out.tfrecord") == ["out.tfrecord"]


@pytest.mark.parametrize(
    "shards,message",
    [
        (0, "`num_output_shards`=0: must be at least 1"),
        (3, "`num_output_shards`=3 needs one `output_file` (a prefix), got 2"),
    ],
)
def test_bad_num_output_shards(shards, message):
    with pytest.raises(generator.PretrainingDataError) as error:
        generator.output_paths("a.tfrecord,b.tfrecord" if shards == 3 else "a.tfrecord", shards)
    assert str(error.value) == message


def main_error(capsys, *argv):
    """Runs the script's main here on `argv`; returns its one-line error after exit status 1."""
    flag_values = flags.FlagValues()
    define_create_pretraining_data_flags(flag_values)
    with pytest.raises(SystemExit) as exit_:
        cli.create_pretraining_data_main(
            flag_values(["create_pretraining_data.py", *argv]), flag_values
        )
    assert exit_.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "case",
    [
        "vocab directory",
        "input directory",
        "output directory",
        "output under a file",
        "stray argument",
    ],
)
def test_main_reports_bad_paths_in_one_line(
    tmp_path, capsys, small_corpus, uncased_vocab_file, case
):
    folder, plain = tmp_path / "folder", tmp_path / "plain.txt"
    folder.mkdir()
    plain.write_text("not a folder\n")
    argv = {
        "input_file": small_corpus,
        "output_file": tmp_path / "out.tfrecord",
        "vocab_file": uncased_vocab_file,
    }
    change, extra, message = {
        "vocab directory": ({"vocab_file": folder}, [], f"{folder}: a directory, not a vocab file"),
        "input directory": (
            {"input_file": folder},
            [],
            f"{folder}: a directory, not a corpus file",
        ),
        "output directory": (
            {"output_file": folder},
            [],
            f"--output_file: {folder} is a directory",
        ),
        "output under a file": (
            {"output_file": plain / "out.tfrecord"},
            [],
            f"--output_file: cannot create the directory {plain} ({plain} is not a directory)",
        ),
        "stray argument": ({}, ["stray.txt"], "unexpected arguments: stray.txt"),
    }[case]
    argv = [f"--{name}={value}" for name, value in {**argv, **change}.items()] + extra
    assert main_error(capsys, *argv) == f"create_pretraining_data.py: error: {message}"
    assert_no_output(tmp_path)


def test_output_that_is_an_input_a_directory_or_listed_twice_is_refused(
    tmp_path, uncased_vocab_file
):
    text = b"the first sentence.\nthe second one.\n\nanother document.\nits end.\n"
    data = write_file(tmp_path / "data" / "corpus.txt", text)
    vocab_text, config_text = (
        pathlib.Path(uncased_vocab_file).read_bytes(),
        (REPO / "configs" / "tiny" / "bert_config.json").read_bytes(),
    )
    vocab = write_file(tmp_path / "data" / "vocab.txt", vocab_text)
    config = write_file(tmp_path / "data" / "bert_config.json", config_text)
    options = generator.PretrainingDataOptions(vocab_file=str(vocab), dupe_factor=1)
    same = str(tmp_path / "data" / ".." / "data" / "corpus.txt")  # the input, spelled otherwise
    twice = str(tmp_path / "out.tfrecord")
    for outputs, message in [
        ([same], f"`output_file`: {same} is also an `input_file`"),
        ([twice, twice], f"`output_file`: {twice} is listed twice"),
        ([twice, str(vocab)], f"`output_file`: {vocab} is also the `vocab_file`"),
        ([str(config)], f"`output_file`: {config} is also the `bert_config_file`"),
        ([str(tmp_path)], f"`output_file`: {tmp_path} is a directory"),
    ]:
        with pytest.raises(corpus.CorpusError) as error:
            generator.create_pretraining_data(
                [str(data)], outputs, options, bert_config_file=str(config), progress=False
            )
        assert str(error.value) == message
    assert (data.read_bytes(), vocab.read_bytes(), config.read_bytes()) == (
        text,
        vocab_text,
        config_text,
    )
    assert_no_output(tmp_path)


def test_negative_random_seed_is_refused_at_parsing():
    flag_values = flags.FlagValues()
    define_create_pretraining_data_flags(flag_values)
    with pytest.raises(flags.IllegalFlagValueError, match=r"^flag --random_seed=-1: "):
        flag_values["random_seed"].parse("-1")


@pytest.mark.parametrize("chunk_mb", ["0", "-1"])
def test_chunk_mb_must_be_above_zero(chunk_mb):
    flag_values = flags.FlagValues()
    define_create_pretraining_data_flags(flag_values)
    with pytest.raises(
        flags.IllegalFlagValueError,
        match=rf"^flag --chunk_mb={chunk_mb}.0: --chunk_mb must be "
        rf"above 0$",
    ):
        flag_values(
            [
                "create_pretraining_data.py",
                "--input_file=a",
                "--output_file=b",
                "--vocab_file=c",
                f"--chunk_mb={chunk_mb}",
            ]
        )


def test_shards_without_examples_are_written_empty_with_a_warning(
    tmp_path, uncased_vocab_file, caplog
):
    data = str(
        write_file(
            tmp_path / "corpus.txt", b"the first sentence.\nthe second one.\n\nanother one.\n"
        )
    )
    options = generator.PretrainingDataOptions(vocab_file=uncased_vocab_file, dupe_factor=1)
    paths = generator.output_paths(str(tmp_path / "out.tfrecord"), 8)
    stats = generator.create_pretraining_data([data], paths, options, progress=False)
    counts = [sum(1 for _ in tf.data.TFRecordDataset(p)) for p in paths]
    assert 0 < stats.examples < 8 and counts == [1] * stats.examples + [0] * (8 - stats.examples)
    assert (
        f"{8 - stats.examples} of the 8 output shards are empty (run_pretraining.py refuses them; "
        f"use fewer --num_output_shards): the corpus gave only {stats.examples} examples"
        in caplog.text
    )


# A killed run ends with a one-line message and leaves
# no output, partial shard or scratch directory.


def start_script(tmp_path, small_corpus, vocab_file):
    """Starts the script with 2 workers, scratch in `tmp_path/tmp`; returns the process."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.Popen(
        [
            sys.executable,
            str(REPO / "create_pretraining_data.py"),
            f"--input_file={small_corpus}",
            f"--output_file={tmp_path / 'out' / 'data.tfrecord'}",
            f"--vocab_file={vocab_file}",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}",
            "--dupe_factor=5",
            "--chunk_mb=0.02",
            "--num_workers=2",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TMPDIR": str(tmp_path / "tmp")},
    )


def poll(process, found, timeout=120):
    """The first true value of `found()`, polled while `process` runs."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if result := found():
            return result
        time.sleep(0.005)
    raise AssertionError(f"not found before the script ended: {process.communicate()[1][-2000:]}")


def finish(process, tmp_path):
    """The last line of the stopped script's stderr, after checking that it left no file."""
    try:
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "out").exists()  # the run created it
    return process.returncode, stderr.strip().splitlines()[-1]


def test_a_killed_worker_ends_the_run_with_an_error(tmp_path, small_corpus, uncased_vocab_file):
    process = start_script(tmp_path, small_corpus, uncased_vocab_file)
    # the workers are busy with chunks
    poll(process, lambda: list((tmp_path / "tmp").glob("*/chunk-*")))
    with open(f"/proc/{process.pid}/task/{process.pid}/children") as children:
        worker = int(children.read().split()[0])
    os.kill(worker, signal.SIGKILL)  # as the out-of-memory killer does
    assert finish(process, tmp_path) == (
        1,
        "create_pretraining_data.py: error: a worker process died (killed, "
        "out of memory?): lower --chunk_mb or --num_workers",
    )


def test_sigterm_cleans_up_as_ctrl_c_does(tmp_path, small_corpus, uncased_vocab_file):
    process = start_script(tmp_path, small_corpus, uncased_vocab_file)
    # the run has started
    poll(process, lambda: list((tmp_path / "out").glob(".data.tfrecord.tmp-*")))
    process.send_signal(signal.SIGTERM)
    assert finish(process, tmp_path) == (143, "create_pretraining_data.py: terminated")


def running(pid):
    """Whether process `pid` exists and is no zombie (dead, not yet reaped by its new parent)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_workers_die_with_a_killed_main_process(tmp_path, small_corpus, uncased_vocab_file):
    process = start_script(tmp_path, small_corpus, uncased_vocab_file)
    # the workers are busy with chunks
    poll(process, lambda: list((tmp_path / "tmp").glob("*/chunk-*")))
    with open(f"/proc/{process.pid}/task/{process.pid}/children") as children:
        workers = [int(pid) for pid in children.read().split()]
    process.kill()  # as the out-of-memory killer does: no clean-up runs
    process.wait()  # not communicate(): orphaned workers would hold its pipes open
    try:
        deadline = time.monotonic() + 10
        while any(map(running, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if running(pid)], "orphaned workers"
    finally:
        for pid in filter(running, workers):
            os.kill(pid, signal.SIGKILL)
        process.stdout.close()
        process.stderr.close()


def test_a_rerun_removes_what_a_killed_run_left(tmp_path, small_corpus, uncased_vocab_file):
    """Its scratch directory and partial shard, which `tf.io.gfile.glob('out/*')` would match."""
    process = start_script(tmp_path, small_corpus, uncased_vocab_file)
    # the run has started
    poll(process, lambda: list((tmp_path / "out").glob(".data.tfrecord.tmp-*")))
    process.kill()  # no clean-up runs
    process.communicate(timeout=60)
    assert list((tmp_path / "out").glob(".data.tfrecord.tmp-*")) and list(
        (tmp_path / "tmp").iterdir()
    )
    rerun = start_script(tmp_path, small_corpus, uncased_vocab_file)
    _, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr[-2000:]
    assert list((tmp_path / "tmp").iterdir()) == []
    assert os.listdir(tmp_path / "out") == ["data.tfrecord"]


def test_a_cased_vocab_with_lower_casing_is_refused_before_the_workers_start(
    tmp_path, small_corpus
):
    """In one line naming the vocab, not as a worker that died in its initializer."""
    cased = write_word_vocab(tmp_path / "cased.txt", ["Alpha met Beta"], do_lower_case=False)
    options = generator.PretrainingDataOptions(vocab_file=cased)
    with pytest.raises(
        VocabError,
        match=rf"^{cased}: a cased vocab .* pass "
        r"`do_lower_case`=false$",
    ):
        generator.create_pretraining_data(
            [small_corpus], [str(tmp_path / "out.tfrecord")], options, num_workers=2, progress=False
        )
    assert_no_output(tmp_path)
