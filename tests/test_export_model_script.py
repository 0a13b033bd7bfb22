"""export_model.py: a google-research/bert TF1 classifier checkpoint, head included, to a SavedModel."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF Text ops the export uses)

from bert_tf.checkpoints import write_tf1_checkpoint
from bert_tf.models import BertClassifier
from bert_test_utils import random_encoder_inputs, tiny_encoder, write_tiny_config, write_word_vocab

REPO = pathlib.Path(__file__).resolve().parents[1]


def run_export_model(*flags):
    return subprocess.run([sys.executable, str(REPO / "export_model.py"), *flags], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_tf1_classifier_checkpoint_exports_with_its_head(tmp_path):
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["a fine day", "a bad day"])
    write_tiny_config(tmp_path, vocab_size=sum(1 for _ in open(vocab, encoding="utf-8")))
    model = BertClassifier(tiny_encoder(vocab_size=sum(1 for _ in open(vocab, encoding="utf-8"))), num_classes=2)
    model.build_with_dummy_inputs()
    head = {"kernel": model.classifier.kernel.numpy(), "bias": np.array([0.5, -0.5], "float32")}
    model.classifier.bias.assign(head["bias"])
    write_tf1_checkpoint(model, tmp_path / "bert_model.ckpt", heads={"classifier": head})

    result = run_export_model("--model_type=classifier", f"--init_checkpoint={tmp_path / 'bert_model.ckpt'}",
                              f"--vocab_file={vocab}", "--labels=bad,fine", "--max_seq_length=16",
                              f"--export_dir={tmp_path / 'export'}")
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    inputs = random_encoder_inputs(3, 16, model.encoder.vocab_size)
    got = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=1e-5)
    assert loaded.signatures["text"](text_a=tf.constant(["a fine day"]))["label"].numpy()[0] in (b"bad", b"fine")


def test_missing_head_is_a_one_line_error(tmp_path):
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["a day"])
    write_tiny_config(tmp_path, vocab_size=sum(1 for _ in open(vocab, encoding="utf-8")))
    write_tf1_checkpoint(tiny_encoder(vocab_size=sum(1 for _ in open(vocab, encoding="utf-8"))),
                         tmp_path / "bert_model.ckpt")
    result = run_export_model("--model_type=classifier", f"--init_checkpoint={tmp_path / 'bert_model.ckpt'}",
                              f"--vocab_file={vocab}", f"--export_dir={tmp_path / 'export'}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("export_model.py: error: ")
    assert "no classifier head" in result.stderr and not (tmp_path / "export").exists()


def test_jit_compile_with_the_hub_pair_is_a_one_line_error(tmp_path):
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["a day"])
    result = run_export_model("--model_type=hub", "--jit_compile", f"--init_checkpoint={tmp_path / 'none'}",
                              f"--vocab_file={vocab}", f"--export_dir={tmp_path / 'export'}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "export_model.py: error: --jit_compile applies to task models (their serving_default), "
        "not --model_type=hub")
    assert not (tmp_path / "export").exists()
