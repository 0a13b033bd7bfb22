"""Small builders shared by the tests: tiny configs, random batches, files and script runs."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np

from bert_tf import BertConfig, BertEncoder

REPO = pathlib.Path(__file__).resolve().parents[1]
TINY = dict(
    vocab_size=97,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=128,
    max_position_embeddings=64,
    type_vocab_size=2,
)


def tiny_config(**overrides) -> BertConfig:
    return BertConfig(**{**TINY, **overrides})


def tiny_encoder(dropout: float = 0.0, **overrides) -> BertEncoder:
    config = tiny_config(
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout, **overrides
    )
    return BertEncoder.from_bert_config(config)


def random_encoder_inputs(batch: int, seq: int, vocab_size: int, lengths=None, seed: int = 0):
    """Random ids with `[CLS]`-style position 0 and trailing padding after `lengths`."""
    rng = np.random.default_rng(seed)
    if lengths is None:
        lengths = rng.integers(seq // 2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < np.asarray(lengths)[:, None]).astype("int32")
    ids = rng.integers(1, vocab_size, size=(batch, seq)).astype("int32") * mask
    type_ids = ((np.arange(seq)[None, :] >= np.asarray(lengths)[:, None] // 2) * mask).astype(
        "int32"
    )
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": type_ids}


def random_pretraining_batch(
    batch: int, seq: int, predictions: int, vocab_size: int, seed: int = 0
):
    """A batch of the pretraining TFRecord features, as the reader yields them."""
    rng = np.random.default_rng(seed)
    inputs = random_encoder_inputs(batch, seq, vocab_size, seed=seed)
    lengths = inputs["input_mask"].sum(axis=1)
    positions = np.stack(
        [np.sort(rng.choice(np.arange(1, n), predictions, replace=False)) for n in lengths]
    ).astype("int32")
    weights = np.ones((batch, predictions), "float32")
    weights[:, -1] = 0.0  # one padded prediction slot per example
    return {
        "input_ids": inputs["input_word_ids"],
        "input_mask": inputs["input_mask"],
        "segment_ids": inputs["input_type_ids"],
        "masked_lm_positions": positions * (weights > 0),
        "masked_lm_ids": rng.integers(1, vocab_size, (batch, predictions)).astype("int32")
        * (weights > 0),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, batch).astype("int32"),
    }


def write_pretraining_records(
    path, num_examples: int, seq: int, predictions: int, vocab_size: int, seed: int = 0
) -> str:
    """Writes random records in the pretraining schema (through the schema module)."""
    return write_pretraining_batch(
        path, random_pretraining_batch(num_examples, seq, predictions, vocab_size, seed=seed)
    )


def write_pretraining_batch(path, batch: dict) -> str:
    """Writes a `random_pretraining_batch` batch as records, one per row, via the schema module."""
    import tensorflow as tf

    from bert_tf.data import pretraining_features

    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(len(batch["input_ids"])):
            values = {name: np.atleast_1d(value[i]).tolist() for name, value in batch.items()}
            writer.write(pretraining_features.to_example(values).SerializeToString())
    return str(path)


def write_tiny_config(directory, **overrides) -> str:
    """Writes a tiny bert_config.json (dropout off unless overridden) and returns its path."""
    values = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    values.update(overrides)
    path = os.path.join(str(directory), "bert_config.json")
    tiny_config(**values).to_json_file(path)
    return path


def model_garden_encoder(hidden_act: str = "gelu", network: str = "BertEncoder"):
    """Model Garden's (tf_keras) `BertEncoder` or `BertEncoderV2`, TINY sizes, no dropout."""
    import tensorflow_models as tfm
    import tf_keras

    approximate = {"gelu": False, "gelu_approximate": True}[hidden_act]
    kwargs = dict(
        vocab_size=TINY["vocab_size"],
        hidden_size=TINY["hidden_size"],
        num_layers=TINY["num_hidden_layers"],
        num_attention_heads=TINY["num_attention_heads"],
        max_sequence_length=TINY["max_position_embeddings"],
        type_vocab_size=TINY["type_vocab_size"],
        inner_dim=TINY["intermediate_size"],
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=approximate),
        output_dropout=0.0,
        attention_dropout=0.0,
    )
    if network == "BertEncoder":
        kwargs["dict_outputs"] = True  # BertEncoderV2 always returns a dict
    return getattr(tfm.nlp.networks, network)(**kwargs)


def assert_encoder_outputs_close(got, expected, atol=1e-5):
    """Two encoders' output dicts agree: sequence, pooled and every layer's output."""
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"], atol=atol)
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=atol)
    assert len(got["encoder_outputs"]) == len(expected["encoder_outputs"])
    for a, b in zip(got["encoder_outputs"], expected["encoder_outputs"]):
        np.testing.assert_allclose(a, b, atol=atol)


def write_cased_vocab(uncased_vocab, texts, path) -> str:
    """A cased WordPiece vocab derived from an uncased one, for cased-tokenizer tests.

    The uncased tokens, their capitalized and upper-case forms (`##` pieces
    upper-cased), then every character of `texts` as a word and as a `##` piece.
    """
    with open(uncased_vocab, encoding="utf-8") as f:
        tokens = [line.rstrip("\n") for line in f]
    derived = []
    for token in tokens:
        if token.startswith("##"):
            derived.append("##" + token[2:].upper())
        elif not token.startswith("["):
            derived += [token.capitalize(), token.upper()]
    for char in sorted(set("".join(texts))):
        if not char.isspace():
            derived += [char, "##" + char]
    vocab = list(dict.fromkeys(tokens + derived))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    return str(path)


def write_word_vocab(path, texts, do_lower_case: bool = True) -> str:
    """A small WordPiece vocab for fixtures: the special tokens, every word of `texts`,
    and every character as a word and as a `##` piece (so any text of these characters
    tokenizes without `[UNK]`)."""
    import re

    words, chars = set(), set()
    for text in texts:
        text = text.lower() if do_lower_case else text
        words.update(re.findall(r"\w+|[^\w\s]", text))
        chars.update(c for c in text if not c.isspace())
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(words)
    tokens += [c for c in sorted(chars) if c not in words] + [f"##{c}" for c in sorted(chars)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(dict.fromkeys(tokens)) + "\n")
    return str(path)


def run_without_bert_tf(script: str, cwd) -> str:
    """Runs `script` in a fresh Python that has only
    TensorFlow and tensorflow-text; returns its stdout.

    bert_tf is installed with `pip install -e`, so the script starts by making any
    import of it fail; `tf` and `tensorflow_text` (its ops registered) are imported for it,
    then frozen out of the garbage collector's way as
    `bert_tf.script.import_out_of_the_collectors_way` does (which the script cannot import).
    """
    prologue = (
        'import atexit, gc, sys\nsys.modules["bert_tf"] = None  # any import of bert_tf now fails\n'
        "gc.disable()\nimport tensorflow as tf\n"
        "import tensorflow_text  # registers the TF Text ops\n"
        "gc.freeze()\ngc.enable()\natexit.register(gc.freeze)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", prologue + textwrap.dedent(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def write_file(path, data: str | bytes) -> pathlib.Path:
    """Writes `data` (text as UTF-8, or bytes) to `path`, making its folder; returns the path."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def assert_fails_with_line(result, line: str) -> None:
    """A script run (`run_script`) failed with exit status 1, its stderr ending in `line`."""
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == line


def script_failures(script: str, *argvs: list[str], timeout: float = 300) -> list[tuple[int, str]]:
    """(exit status, last line of stderr) of `script` run on each of `argvs`, all in one fresh
    process: the script defines its flags as when it runs, and its `app.run(main)` becomes a loop
    calling `main` on each argv's flags (one TensorFlow start, not one a run). A failing run must
    print nothing to stdout. Each argv must pass absl's parsing (an unknown flag's error is absl's
    own: check it with `run_script`)."""
    runner = f"""
        import contextlib, io, json, runpy
        from absl import app, flags

        def run_each(main):
            for argv in {[list(argv) for argv in argvs]!r}:
                flags.FLAGS.unparse_flags()
                stdout, stderr, status = io.StringIO(), io.StringIO(), 0
                try:
                    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                        # as app.run: the arguments left after the flags
                        main(flags.FLAGS([{script!r}, *argv]))
                except SystemExit as exit:
                    status = exit.code
                last = (stderr.getvalue().strip().splitlines() or [""])[-1]
                print(json.dumps([status, last, stdout.getvalue()]))

        app.run = run_each
        runpy.run_path({str(REPO / script)!r}, run_name="__main__")
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(runner)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    printed = {" ".join(argv): stdout for argv, (_, _, stdout) in zip(argvs, runs) if stdout}
    assert not printed, f"failing runs printed to stdout: {printed}"
    return [(status, line) for status, line, _ in runs]


def run_script(script: str, *flags: str, timeout: float = 300):
    """Runs `script` (a `.py` file of the repository root, or a module for `python -m`) on `flags`
    in the repository root; returns the `subprocess.CompletedProcess`, its output as text.

    TensorFlow's C++ logging is off, so stderr holds what the script prints.
    """
    command = [str(REPO / script)] if script.endswith(".py") else ["-m", script]
    return subprocess.run(
        [sys.executable, *command, *flags],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
