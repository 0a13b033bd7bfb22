"""extract_features.py: the JSON values are the encoder's own activations; pooling; bad flags."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from bert_test_utils import REPO, write_tiny_config, write_word_vocab
from bert_tf.cli_errors import USER_ERRORS, flag_wording
from bert_tf.models import BertEncoder
from bert_tf.tasks import feature_extraction
from bert_tf.tasks.feature_extraction import (
    FeatureExtractionOptions,
    FeatureExtractor,
    parse_layers,
    read_texts,
)
from bert_tf.tasks.flags import define_feature_extraction_flags
from bert_tf.tokenization import BertTokenizer
from bert_tf.training.runtime_flags import options_from_flags

LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "Where is the dog? ||| It sleeps under the old tree.",
    "a tree " * 40,  # longer than --max_seq_length: cut
    "Foxes run.",
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny encoder with random weights, its vocab, config and bert_tf checkpoint."""
    directory = tmp_path_factory.mktemp("model")
    vocab = write_word_vocab(directory / "vocab.txt", [line.replace("|||", "") for line in LINES])
    tokenizer = BertTokenizer(vocab)
    (directory / "config").mkdir()  # not beside the checkpoint, so that it stores no config
    config = write_tiny_config(directory / "config", vocab_size=tokenizer.vocab_size)
    encoder = BertEncoder.from_config_file(config)
    checkpoint = tf.train.Checkpoint(encoder=encoder).write(str(directory / "ckpt"))
    input_file = directory / "input.txt"
    input_file.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return dict(
        encoder=encoder,
        tokenizer=tokenizer,
        vocab=vocab,
        config=config,
        checkpoint=checkpoint,
        input_file=input_file,
    )


def run_extract_features(*flags):
    return subprocess.Popen(
        [sys.executable, str(REPO / "extract_features.py"), *flags],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )


def encode(tokenizer, text_a, text_b, seq_length):
    segments = [tokenizer.tokenize([text_a])] + ([tokenizer.tokenize([text_b])] if text_b else [])
    return {
        name: value.numpy() for name, value in tokenizer.pack_inputs(segments, seq_length).items()
    }


def test_json_values_are_the_encoders_outputs(model, tmp_path):
    output = tmp_path / "features.jsonl"
    process = run_extract_features(
        f"--input_file={model['input_file']}",
        f"--output_file={output}",
        f"--vocab_file={model['vocab']}",
        f"--bert_config_file={model['config']}",
        f"--init_checkpoint={model['checkpoint']}",
        "--layers=-1,0",
        "--max_seq_length=24",
        "--batch_size=3",
        "--pooling=mean",
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "extract_features" in stderr  # the progress bar
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [record["linex_index"] for record in records] == [0, 1, 2, 3]
    assert not list(tmp_path.glob("*.tmp-*"))

    encoder, tokenizer = model["encoder"], model["tokenizer"]
    for line, record in zip(LINES, records):
        text_a, _, text_b = line.partition(" ||| ")
        inputs = encode(tokenizer, text_a, text_b, 24)
        length = inputs["input_mask"].sum()
        expected = encoder(inputs, training=False)["encoder_outputs"]  # 2 x [1, 24, hidden]
        tokens = [feature["token"] for feature in record["features"]]
        assert tokens == tokenizer.convert_ids_to_tokens(inputs["input_word_ids"][0, :length])
        assert (
            tokens[0] == "[CLS]"
            and tokens[-1] == "[SEP]"
            and tokens.count("[SEP]") == (2 if text_b else 1)
        )
        for t, feature in enumerate(record["features"]):
            assert [layer["index"] for layer in feature["layers"]] == [-1, 0]
            for layer, block in zip(feature["layers"], (1, 0)):
                assert all(len(repr(value).split(".")[-1]) <= 6 for value in layer["values"])
                np.testing.assert_allclose(layer["values"], expected[block][0, t], atol=1e-5)
        mean = (expected[0][0, :length] + expected[1][0, :length]).numpy().mean(axis=0) / 2
        np.testing.assert_allclose(record["pooled"], mean, atol=1e-5)
    assert len(records[2]["features"]) == 24  # the long line was cut to --max_seq_length


def test_cls_pooling_and_batches_agree(model):
    pairs = [("Where is the dog?", "It sleeps."), ("Foxes run.", None), ("The lazy dog.", None)]
    extractor = FeatureExtractor(
        model["encoder"], model["tokenizer"], layers=[-2], max_seq_length=16, pooling="cls"
    )
    together = extractor.extract(pairs, first_index=5)
    one_by_one = [extractor.extract([pair], first_index=5 + i)[0] for i, pair in enumerate(pairs)]
    assert [record["linex_index"] for record in together] == [5, 6, 7]
    for record, single, (text_a, text_b) in zip(together, one_by_one, pairs):
        inputs = encode(model["tokenizer"], text_a, text_b, 16)
        last = model["encoder"](inputs, training=False)["sequence_output"][0, 0]
        np.testing.assert_allclose(record["pooled"], last, atol=1e-5)
        np.testing.assert_allclose(single["pooled"], record["pooled"], atol=1e-5)
        assert [f["token"] for f in single["features"]] == [f["token"] for f in record["features"]]
        for a, b in zip(single["features"], record["features"]):
            assert a["layers"][0]["index"] == b["layers"][0]["index"] == -2
            np.testing.assert_allclose(
                a["layers"][0]["values"], b["layers"][0]["values"], atol=1e-5
            )


def test_layers_are_checked():
    assert parse_layers("-1,-2,0", 2) == [-1, -2, 0]
    with pytest.raises(ValueError, match=r"^`layers`=-1,x: 'x' is not an integer$"):
        parse_layers("-1,x", 2)
    with pytest.raises(ValueError, match=r"layer -3 is outside -2\.\.1 \(the model has 2 layers\)"):
        parse_layers("-3", 2)


def test_an_input_that_is_not_utf8_is_a_user_error(tmp_path):
    """One line and exit status 1 from the script, not an internal error."""
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(USER_ERRORS, match=r"latin1\.txt:1: not UTF-8"):
        read_texts(str(tmp_path / "latin1.txt"))


def parsed_flags(*argv):
    flag_values = flags.FlagValues()
    define_feature_extraction_flags(flag_values)
    flag_values(["extract_features.py", *argv])
    return flag_values


def options_of(flag_values):
    """The options that extract_features.py's main reads from `flag_values`."""
    return options_from_flags(FeatureExtractionOptions, flag_values)


@pytest.mark.parametrize(
    "case",
    [
        "missing input",
        "input directory",
        "input not UTF-8",
        "missing vocab",
        "missing config",
        "no config",
        "bad layers",
        "long sequence",
        "pair too long",
        "output is the input",
        "output is the vocab",
        "output is a directory",
        "no output directory",
    ],
)
def test_bad_flags_are_one_line_errors(model, tmp_path, case):
    missing, latin1, pairs = tmp_path / "none.txt", tmp_path / "latin1.txt", tmp_path / "pairs.txt"
    latin1.write_bytes("fine\nalso fine\ncaf\u00e9\n".encode("latin-1"))
    pairs.write_text("Foxes run.\nWhere is the dog? ||| It sleeps.\n", encoding="utf-8")
    argv = {
        "input_file": model["input_file"],
        "output_file": tmp_path / "out.jsonl",
        "vocab_file": model["vocab"],
        "bert_config_file": model["config"],
        "init_checkpoint": model["checkpoint"],
    }
    change, message = {
        "missing input": ({"input_file": missing}, f"--input_file={missing}: no such file"),
        "input directory": (
            {"input_file": tmp_path},
            f"--input_file={tmp_path}: a directory, not a file",
        ),
        "input not UTF-8": (
            {"input_file": latin1},
            f"{latin1}:3: not UTF-8 (invalid continuation byte)",
        ),
        "missing vocab": ({"vocab_file": missing}, f"--vocab_file={missing}: no such file"),
        "missing config": (
            {"bert_config_file": missing},
            f"--bert_config_file={missing}: no such file",
        ),
        "no config": (
            {"bert_config_file": None},
            (
                f"--bert_config_file is required: no bert_config.json or config.json lies beside "
                f"--init_checkpoint={model['checkpoint']}"
            ),
        ),
        "bad layers": (
            {"layers": "-1,5"},
            "--layers=-1,5: layer 5 is outside -2..1 (the model has 2 layers)",
        ),
        "long sequence": (
            {"max_seq_length": 65, "layers": "-1"},
            "--max_seq_length=65 exceeds the model's max_position_embeddings 64",
        ),
        "pair too long": (
            {"input_file": pairs, "max_seq_length": 3},
            f"--max_seq_length=3 is too short for the "
            f"text pair at {pairs}:2: [CLS] a [SEP] b [SEP] needs 4 or more",
        ),
        "output is the input": (
            {"output_file": model["input_file"]},
            f"--output_file: {model['input_file']} is also an --input_file",
        ),
        "output is the vocab": (
            {"output_file": model["vocab"]},
            f"--output_file: {model['vocab']} is also the --vocab_file",
        ),
        "output is a directory": (
            {"output_file": tmp_path},
            f"--output_file: {tmp_path} is a directory",
        ),
        # Before the model loads: the checkpoint is not even looked at.
        "no output directory": (
            {"output_file": tmp_path / "none" / "out.jsonl", "init_checkpoint": missing},
            f"--output_file: no directory {tmp_path / 'none'}",
        ),
    }[case]
    inputs = {path: path.read_bytes() for path in (Path(model["input_file"]), Path(model["vocab"]))}
    argv = {**argv, **change}
    flag_values = parsed_flags(
        *(f"--{name}={value}" for name, value in argv.items() if value is not None)
    )
    with pytest.raises((ValueError, FileNotFoundError)) as error:
        feature_extraction.run(options_of(flag_values))
    assert flag_wording(error.value, flag_values) == message  # as the script words it
    assert not (tmp_path / "out.jsonl").exists()
    assert all(path.read_bytes() == content for path, content in inputs.items())


def test_no_file_of_the_checkpoint_is_an_output(model, tmp_path):
    """Not its tensors, its index, nor the config read from beside it (no --bert_config_file)."""
    directory = tmp_path / "bert"
    prefix = tf.train.Checkpoint(encoder=model["encoder"]).write(str(directory / "ckpt"))
    shutil.copy(model["config"], directory / "bert_config.json")
    files = {path: path.read_bytes() for path in directory.iterdir()}
    assert len(files) == 3  # ckpt.index, ckpt.data-00000-of-00001, bert_config.json
    for target in files:
        flag_values = parsed_flags(
            f"--input_file={model['input_file']}",
            f"--output_file={target}",
            f"--vocab_file={model['vocab']}",
            f"--init_checkpoint={prefix}",
        )
        with pytest.raises(ValueError) as error:
            feature_extraction.run(options_of(flag_values))
        message = f"--output_file: {target} is also a file of the --init_checkpoint"
        assert flag_wording(error.value, flag_values) == message  # as the script words it
    assert {path: path.read_bytes() for path in directory.iterdir()} == files


def test_script_reports_a_bad_flag_in_one_line(model, tmp_path):
    process = run_extract_features(
        f"--input_file={model['input_file']}",
        f"--output_file={tmp_path / 'out.jsonl'}",
        f"--vocab_file={model['vocab']}",
        f"--bert_config_file={model['config']}",
        f"--init_checkpoint={model['checkpoint']}",
        "--layers=-1,two",
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    assert stderr.strip().splitlines()[-1] == (
        "extract_features.py: error: --layers=-1,two: 'two' is not an integer"
    )


def test_google_research_bert_tpu_flags_are_accepted(model, tmp_path):
    """Its command lines carry them; the features are computed here all the same."""
    flag_values = parsed_flags(
        f"--input_file={model['input_file']}",
        f"--output_file={tmp_path / 'out.jsonl'}",
        f"--vocab_file={model['vocab']}",
        f"--bert_config_file={model['config']}",
        f"--init_checkpoint={model['checkpoint']}",
        "--layers=-1",
        "--max_seq_length=8",
        "--use_tpu=true",
        "--master=grpc://10.0.0.2:8470",
        "--num_tpu_cores=8",
        "--use_one_hot_embeddings=true",
    )
    assert feature_extraction.run(options_of(flag_values)) == len(LINES)


def test_empty_input_gives_an_empty_output(model, tmp_path):
    """As google-research/bert's extract_features.py, which opens the output before predicting."""
    (tmp_path / "empty.txt").write_bytes(b"")
    flag_values = parsed_flags(
        f"--input_file={tmp_path / 'empty.txt'}",
        f"--output_file={tmp_path / 'out.jsonl'}",
        f"--vocab_file={model['vocab']}",
        f"--bert_config_file={model['config']}",
        f"--init_checkpoint={model['checkpoint']}",
        "--layers=-1",
        "--max_seq_length=32",
    )
    assert feature_extraction.run(options_of(flag_values)) == 0
    assert (tmp_path / "out.jsonl").read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "out.jsonl"]
