"""export_model.py: a google-research/bert TF1 classifier checkpoint, with head, to a SavedModel."""

import json
import os
import socket
import time

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF Text ops the export uses)

from bert_test_utils import (
    assert_fails_with_line,
    random_encoder_inputs,
    run_script,
    script_failures,
    tiny_config,
    tiny_encoder,
    write_tiny_config,
    write_word_vocab,
)
from bert_tf import output_lock
from bert_tf.checkpoints import resolve_bert_config, write_tf1_checkpoint
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.models import BertClassifier, BertPretrainer, BertSpanLabeler
from bert_tf.pretraining.checkpoints import pretraining_checkpoint
from checkpoint_test_utils import randomize_weights


def assert_one_line_error(result, message):
    assert_fails_with_line(result, f"export_model.py: error: {message}")


def write_tf1_classifier(directory):
    """A google-research/bert classifier checkpoint, 2 classes, config beside; (model, vocab)."""
    vocab = write_word_vocab(directory / "vocab.txt", ["a fine day", "a bad day"])
    vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
    write_tiny_config(directory, vocab_size=vocab_size)
    model = BertClassifier(tiny_encoder(vocab_size=vocab_size), num_classes=2)
    model.build_with_dummy_inputs()
    # The bias favours class 1: a label read from the wrong end of --labels shows.
    head = {"kernel": model.classifier.kernel.numpy(), "bias": np.array([-0.5, 0.5], "float32")}
    model.classifier.bias.assign(head["bias"])
    write_tf1_checkpoint(model, directory / "bert_model.ckpt", heads={"classifier": head})
    return model, vocab


def test_tf1_classifier_checkpoint_exports_with_its_head(tmp_path):
    model, vocab = write_tf1_classifier(tmp_path)
    result = run_script(
        "export_model.py",
        "--model_type=classifier",
        f"--init_checkpoint={tmp_path / 'bert_model.ckpt'}",
        f"--vocab_file={vocab}",
        "--labels=bad,fine",
        "--max_seq_length=16",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    inputs = random_encoder_inputs(3, 16, model.encoder.vocab_size)
    got = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=1e-5)
    text = loaded.signatures["text"](text_a=tf.constant(["a fine day", "a bad day"]))
    predicted = text["probabilities"].numpy().argmax(-1)
    assert predicted.tolist() == [1, 1]  # the head's bias wins
    assert text["label"].numpy().tolist() == [[b"bad", b"fine"][i] for i in predicted]


def test_dtype_bfloat16_stores_bfloat16_weights(tmp_path):
    model, vocab = write_tf1_classifier(tmp_path)
    result = run_script(
        "export_model.py",
        "--model_type=classifier",
        "--dtype=bfloat16",
        f"--init_checkpoint={tmp_path / 'bert_model.ckpt'}",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    assert {v.dtype.name for v in loaded.model_variables if "layer_norm" not in v.name} >= {
        "bfloat16"
    }
    assert "float32" not in {v.dtype.name for v in loaded.model_variables if "kernel" in v.name}
    inputs = random_encoder_inputs(3, 16, model.encoder.vocab_size)
    got = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=5e-3)


def test_hub_pair_from_a_pretraining_checkpoint(tmp_path):
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["the cat sat on the mat"])
    vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
    model = BertPretrainer(tiny_encoder(vocab_size=vocab_size))
    model.build_with_dummy_inputs()
    randomize_weights(model)
    optimizer = keras.optimizers.AdamW(1e-3)
    optimizer.build(model.trainable_variables)
    output_dir = tmp_path / "pretraining"  # as run_pretraining.py leaves it
    tf.train.CheckpointManager(
        pretraining_checkpoint(model, optimizer), output_dir, max_to_keep=1
    ).save()
    write_tiny_config(output_dir, vocab_size=vocab_size)

    result = run_script(
        "export_model.py",
        "--model_type=hub",
        f"--init_checkpoint={output_dir}",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    preprocessing = tf.saved_model.load(str(tmp_path / "export" / "preprocessing"))
    encoder = tf.saved_model.load(str(tmp_path / "export" / "encoder"))
    inputs = preprocessing(tf.constant(["the cat [MASK] on the mat"]))
    positions = tf.constant([[3]])
    got = encoder.mlm({**inputs, "masked_lm_positions": positions})["mlm_logits"]
    expected = model(
        {
            "input_ids": inputs["input_word_ids"],
            "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"],
            "masked_lm_positions": positions,
        }
    )
    np.testing.assert_allclose(got, expected["masked_lm_logits"], atol=1e-5)


def test_the_checkpoint_is_read_once(tmp_path, caplog):
    write_tf1_classifier(tmp_path)
    checkpoint = str(tmp_path / "bert_model.ckpt")
    with caplog.at_level("INFO", logger="absl"):
        model_from_checkpoint(checkpoint, "classifier", resolve_bert_config(None, checkpoint))
    assert sum("loaded" in record.getMessage() for record in caplog.records) == 1


def test_a_fine_tuned_checkpoint_exports_with_its_saved_labels(tmp_path):
    """bert_tf's best/labels.json names the classes in the export; a --labels of the same names
    reorders the head, one of other names renames them (checked on the model the script exports)."""
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["a fine day"])
    config = tiny_config(vocab_size=sum(1 for _ in open(vocab, encoding="utf-8")))
    model = BertClassifier(tiny_encoder(vocab_size=config.vocab_size), num_classes=2)
    model.build_with_dummy_inputs()
    model.classifier.bias.assign([-0.5, 0.5])  # class 1 wins
    best = str(tmp_path / "best")
    save_model_checkpoint(model, best, {}, labels=["neg", "pos"])
    result = run_script(
        "export_model.py",
        "--model_type=classifier",
        f"--init_checkpoint={best}",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = tf.saved_model.load(str(tmp_path / "export")).signatures["text"](
        text_a=tf.constant(["a fine day"])
    )
    assert outputs["label"].numpy().tolist() == [b"pos"]
    inputs = random_encoder_inputs(2, 8, config.vocab_size)
    logits = model(inputs)["logits"].numpy()
    for labels, expected in ((["bad", "good"], logits), (["pos", "neg"], logits[:, ::-1])):
        exported = model_from_checkpoint(best, "classifier", config, labels=labels)
        np.testing.assert_allclose(
            exported(inputs)["logits"], expected, atol=1e-5, err_msg=str(labels)
        )


# Flags given for a --model_type that does not use
# it, and export_model.py's one-line error for each.
UNUSED_FLAGS = [
    (
        ("--model_type=span", "--labels=a,b"),
        "--labels applies to --model_type=classifier or token, not --model_type=span",
    ),
    (
        ("--model_type=hub", "--labels=a,b", "--num_classes=2"),
        "--labels, --num_classes apply to --model_type=classifier or token, not --model_type=hub",
    ),
    (
        ("--model_type=classifier", "--doc_stride=64", "--noversion_2_with_negative"),
        "--doc_stride, --version_2_with_negative apply to "
        "--model_type=span, not --model_type=classifier",
    ),
    (
        ("--model_type=token", "--null_score_diff_threshold=-3", "--n_best_size=5"),
        "--null_score_diff_threshold, --n_best_size apply "
        "to --model_type=span, not --model_type=token",
    ),
    (
        ("--model_type=span", "--null_score_diff_threshold=-3"),
        "--null_score_diff_threshold applies with --version_2_with_negative (SQuAD 2.0) only",
    ),
    (
        ("--model_type=hub", "--jit_compile"),
        "--jit_compile applies to task models (their serving_default), not --model_type=hub",
    ),
    (("--model_type=hub", "extra", "words"), "unexpected arguments: extra words"),
]


def test_bad_flags_and_checkpoints_are_one_line_errors(tmp_path):
    """Refused before an export is written: the first case through the script, every case through
    `script_failures`'s one process (a process each would take seconds)."""
    export = f"--export_dir={tmp_path / 'export'}"
    nothing = [
        f"--init_checkpoint={tmp_path / 'none'}",
        f"--vocab_file={tmp_path / 'vocab.txt'}",
        export,
    ]
    cases = [([*flags, *nothing], message) for flags, message in UNUSED_FLAGS]
    (tmp_path / "tf1").mkdir()
    # max_position_embeddings 64, a head of 2 classes
    _, vocab = write_tf1_classifier(tmp_path / "tf1")
    classifier = [
        f"--init_checkpoint={tmp_path / 'tf1' / 'bert_model.ckpt'}",
        f"--vocab_file={vocab}",
        export,
    ]
    cases += [
        (
            ["--model_type=classifier", "--num_classes=3", "--max_seq_length=16", *classifier],
            "--num_classes=3 (or the number of --labels) does not fit "
            f"{tmp_path / 'tf1' / 'bert_model.ckpt'}: its classifier head has 2 classes",
        ),
        (
            ["--model_type=classifier", "--max_seq_length=65", *classifier],
            "--max_seq_length=65 exceeds the model's max_position_embeddings 64",
        ),
    ]
    (tmp_path / "encoder").mkdir()
    headless = tmp_path / "encoder" / "bert_model.ckpt"
    write_tiny_config(
        tmp_path / "encoder", vocab_size=sum(1 for _ in open(vocab, encoding="utf-8"))
    )
    write_tf1_checkpoint(
        tiny_encoder(vocab_size=sum(1 for _ in open(vocab, encoding="utf-8"))), headless
    )
    cases.append(
        (
            [
                "--model_type=classifier",
                f"--init_checkpoint={headless}",
                f"--vocab_file={vocab}",
                "--labels=a,b",
                "--max_seq_length=16",
                export,
            ],
            f"{headless}: no classifier head (output_weights, Hugging Face classifier or a bert_tf "
            "classifier); export it with the --model_type it was fine-tuned for",
        )
    )

    argv, message = cases[0]
    assert_one_line_error(run_script("export_model.py", *argv), message)
    busy = tmp_path / "busy"  # another export's, in progress: its lock is beside it
    with output_lock.claimed(str(busy), "export_dir", beside=True):
        since = time.gmtime(json.loads((tmp_path / ".busy.lock").read_text())["started"])
        cases.append(
            (
                ["--model_type=classifier", *classifier[:2], f"--export_dir={busy}"],
                f"--export_dir={busy} is in use by another run: "
                f"pid {os.getpid()} on {socket.gethostname()} "
                f"since {time.strftime('%Y-%m-%d %H:%M:%S UTC', since)}; wait for it to end, or "
                "choose another --export_dir",
            )
        )
        assert script_failures("export_model.py", *(argv for argv, _ in cases)) == [
            (1, f"export_model.py: error: {message}") for _, message in cases
        ]
    assert not (tmp_path / "export").exists()


def test_a_squad_2_export_stores_the_null_score_threshold(tmp_path):
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["who wrote it", "Ann wrote it"])
    model = BertSpanLabeler(tiny_encoder(vocab_size=sum(1 for _ in open(vocab, encoding="utf-8"))))
    model.build_with_dummy_inputs()
    save_model_checkpoint(model, str(tmp_path / "best"), {})
    result = run_script(
        "export_model.py",
        "--model_type=span",
        f"--init_checkpoint={tmp_path / 'best'}",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        "--max_query_length=4",
        "--version_2_with_negative",
        "--null_score_diff_threshold=-3",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert float(tf.saved_model.load(str(tmp_path / "export")).null_score_diff_threshold) == -3.0
