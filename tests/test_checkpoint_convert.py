"""`convert_checkpoint.py` (`bert_tf.checkpoints.convert`): TF1 -> bert_tf -> TF1 is lossless, and
its output directory is ready to use."""

import json
import logging

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    assert_fails_with_line,
    random_encoder_inputs,
    run_script,
    script_failures,
    tiny_encoder,
    write_tiny_config,
)
from bert_tf import BertConfig, BertEncoder
from bert_tf.checkpoints import CheckpointFormat, detect_format, load_checkpoint
from bert_tf.checkpoints.convert import convert
from bert_tf.checkpoints.task_heads import TASK_MODELS
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.models import BertClassifier, BertSpanLabeler
from checkpoint_test_utils import (
    GOOGLE_CONFIG,
    google_variable_shapes,
    random_tensors,
    randomize_weights,
    write_google_tf1_checkpoint,
)


def run_convert(*flags):
    """Runs convert_checkpoint.py on `flags`; returns the `subprocess.CompletedProcess`."""
    return run_script("convert_checkpoint.py", *map(str, flags))


def converted(*flags) -> str:
    """What convert_checkpoint.py printed on success with `flags`: flags to run on its output."""
    result = run_convert(*flags)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def read_all(prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def test_tf1_to_bert_tf_to_tf1_is_lossless(tmp_path):
    tensors = random_tensors(google_variable_shapes(), seed=8)
    google = tmp_path / "uncased_L-2_H-64"
    write_google_tf1_checkpoint(google, tensors, GOOGLE_CONFIG)

    ours = tmp_path / "bert_tf"
    printed = converted(f"--input_checkpoint={google}", f"--output_dir={ours}", "--to=bert_tf")
    assert printed == (
        f"--init_checkpoint={ours}/ckpt --bert_config_file={ours}/bert_config.json "
        f"--vocab_file={ours}/vocab.txt"
    )
    assert sorted(p.name for p in ours.iterdir()) == [
        "bert_config.json",
        "ckpt.data-00000-of-00001",
        "ckpt.index",
        "vocab.txt",
    ]
    assert (ours / "vocab.txt").read_text() == (google / "vocab.txt").read_text()
    assert BertConfig.from_json_file(ours / "bert_config.json").to_dict() == GOOGLE_CONFIG
    assert detect_format(ours) == (CheckpointFormat.BERT_TF, f"{ours}/ckpt")

    back = tmp_path / "tf1"
    printed = converted(f"--input_checkpoint={ours}/ckpt", f"--output_dir={back}")
    assert printed.startswith(f"--init_checkpoint={back}/bert_model.ckpt ")
    restored = read_all(back / "bert_model.ckpt")
    assert sorted(restored) == sorted(tensors)
    for name, value in tensors.items():
        np.testing.assert_array_equal(restored[name], value, err_msg=name)


def test_encoder_only_input_writes_no_made_up_heads(tmp_path):
    shapes = {
        name: shape for name, shape in google_variable_shapes().items() if name.startswith("bert/")
    }
    google = tmp_path / "encoder_only"
    write_google_tf1_checkpoint(google, random_tensors(shapes, seed=9), vocab=False)
    config = tmp_path / "bert_config.json"
    config.write_text(json.dumps(GOOGLE_CONFIG))

    ours = tmp_path / "bert_tf"
    convert(str(google), str(ours), "bert_tf", str(config))
    assert not (ours / "vocab.txt").exists()
    # The encoder alone, as tf.train.Checkpoint(encoder=...).
    assert {name.split("/")[0] for name, _ in tf.train.list_variables(str(ours / "ckpt"))} == {
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "encoder",
    }

    back = tmp_path / "tf1"
    convert(str(ours), str(back))
    assert sorted(read_all(back / "bert_model.ckpt")) == sorted(shapes)


def saved_as_checkpoint(model, directory):
    save_model_checkpoint(model, str(directory / "best"), {})
    return directory / "best" / "ckpt"


def saved_as_keras_file(model, directory):
    model.save(directory / "model.keras")
    return directory / "model.keras"


@pytest.mark.parametrize("save", [saved_as_checkpoint, saved_as_keras_file])
@pytest.mark.parametrize(
    "model_class, head, names",
    [
        (
            lambda encoder: BertClassifier(encoder, num_classes=3),
            "classifier",
            ("output_weights", "output_bias"),
        ),
        (BertSpanLabeler, "span_classifier", ("cls/squad/output_weights", "cls/squad/output_bias")),
    ],
)
def test_a_fine_tuned_head_goes_to_tf1_under_googles_names(
    tmp_path, model_class, head, names, save
):
    model = model_class(tiny_encoder())
    model.build_with_dummy_inputs()
    randomize_weights(model)
    convert(str(save(model, tmp_path)), str(tmp_path / "tf1"))
    restored = read_all(tmp_path / "tf1" / "bert_model.ckpt")
    layer = getattr(model, head)
    # TF1: [outputs, hidden]
    np.testing.assert_array_equal(restored[names[0]], layer.kernel.numpy().T)
    np.testing.assert_array_equal(restored[names[1]], layer.bias.numpy())
    np.testing.assert_array_equal(
        restored["bert/pooler/dense/kernel"], model.encoder.pooler.kernel.numpy()
    )


@pytest.mark.parametrize(
    "hidden_act, googles, exact_in_bert_tf",
    [
        ("gelu", "gelu", True),
        ("relu", "relu", True),
        ("tanh", "tanh", True),
        ("linear", "linear", True),
        # The tanh approximation: google-research/bert's
        # "gelu", which bert_tf reads as the exact erf form.
        ("gelu_new", "gelu", False),
        ("gelu_pytorch_tanh", "gelu", False),
    ],
)
def test_tf1_output_names_hidden_act_as_google_research_bert_does(
    hidden_act, googles, exact_in_bert_tf, tmp_path, caplog
):
    source = tmp_path / "source"
    source.mkdir()
    encoder = tiny_encoder(hidden_act=hidden_act)
    write_tiny_config(source, hidden_act=hidden_act)
    tf.train.Checkpoint(encoder=encoder).write(str(source / "ckpt"))
    with caplog.at_level(logging.WARNING, logger="absl"):
        convert(str(source), str(tmp_path / "tf1"))

    # google-research/bert's modeling.get_activation knows linear, relu, gelu and tanh only.
    assert json.loads((tmp_path / "tf1" / "bert_config.json").read_text())["hidden_act"] == googles
    assert ("at most 4.7e-4 apart" in caplog.text) == (
        hidden_act in ("gelu", "gelu_new", "gelu_pytorch_tanh")
    )
    back = BertEncoder.from_config_file(tmp_path / "tf1" / "bert_config.json")
    load_checkpoint(tmp_path / "tf1", back)
    inputs = random_encoder_inputs(2, 12, back.vocab_size, lengths=[12, 5], seed=3)
    difference = np.abs(back(inputs)["sequence_output"] - encoder(inputs)["sequence_output"]).max()
    assert (difference == 0) == exact_in_bert_tf


def test_bert_tf_output_of_a_google_gelu_warns_that_bert_tf_computes_it_exactly(tmp_path, caplog):
    """A TF1 "gelu" is the tanh form, bert_tf's the exact erf; no warning for other formats."""
    source = tmp_path / "source"
    source.mkdir()
    write_tiny_config(source)
    tf.train.Checkpoint(encoder=tiny_encoder()).write(str(source / "ckpt"))
    convert(str(source), str(tmp_path / "tf1"))
    advice = "set 'gelu_approximate' in the output's bert_config.json to compute the tanh form"
    for checkpoint, warned in ((source, False), (tmp_path / "tf1", True)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="absl"):
            convert(str(checkpoint), str(tmp_path / f"bert_tf_{warned}"), to="bert_tf")
        assert (advice in caplog.text) == warned


def test_tf1_output_refuses_an_activation_google_research_bert_cannot_compute(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    write_tiny_config(source, hidden_act="silu")
    tf.train.Checkpoint(encoder=tiny_encoder(hidden_act="silu")).write(str(source / "ckpt"))
    result = run_convert(f"--input_checkpoint={source}", f"--output_dir={tmp_path / 'tf1'}")
    assert_fails_with_line(
        result,
        "convert_checkpoint.py: error: --to=tf1: hidden_act 'silu' has no google-research/bert "
        "name (its modeling.get_activation knows linear, relu, gelu, tanh): use --to bert_tf",
    )
    assert not (tmp_path / "tf1").exists()


def test_tf1_output_warns_that_class_names_are_not_carried(tmp_path, caplog):
    model = BertClassifier(tiny_encoder(), num_classes=2)
    model.build_with_dummy_inputs()
    # best/labels.json
    save_model_checkpoint(model, str(tmp_path / "best"), {}, labels=["neg", "pos"])
    with caplog.at_level(logging.WARNING, logger="absl"):
        convert(str(tmp_path / "best"), str(tmp_path / "tf1"))
    assert "the class names are not carried" in caplog.text and "--labels=neg,pos" in caplog.text


@pytest.mark.parametrize("model_type", ["token", "multiple_choice"])
def test_tf1_output_leaves_out_a_head_google_has_no_names_for_with_a_warning(
    tmp_path, caplog, model_type
):
    model = TASK_MODELS[model_type][0](
        tiny_encoder(), **({"num_classes": 3} if model_type == "token" else {})
    )
    model.build_with_dummy_inputs()
    save_model_checkpoint(model, str(tmp_path / "best"), {})
    with caplog.at_level(logging.WARNING, logger="absl"):
        convert(str(tmp_path / "best"), str(tmp_path / "tf1"))
    assert (
        f"{tmp_path / 'best' / 'ckpt'}: its {model_type} head is left out: google-research/bert "
        f"has no names for it; export the model with export_model.py --model_type={model_type}"
    ) in caplog.messages
    assert not any(
        name.startswith(("output_", "cls/"))
        for name in read_all(tmp_path / "tf1" / "bert_model.ckpt")
    )


def encoder_checkpoint(directory):
    """A bert_tf encoder checkpoint with its config and a vocab beside it; returns its directory."""
    directory.mkdir()
    write_tiny_config(directory)
    (directory / "vocab.txt").write_text("[PAD]\n")
    tf.train.Checkpoint(encoder=tiny_encoder()).write(str(directory / "ckpt"))
    return directory


def test_the_output_replaces_an_earlier_conversion_whole(tmp_path):
    source, output = encoder_checkpoint(tmp_path / "source"), tmp_path / "out"
    convert(str(source), str(output), "bert_tf")
    assert convert(str(source), str(output)) == f"{output}/bert_model.ckpt"
    assert sorted(p.name for p in output.iterdir()) == [  # no ckpt.* of the bert_tf conversion left
        "bert_config.json",
        "bert_model.ckpt.data-00000-of-00001",
        "bert_model.ckpt.index",
        "vocab.txt",
    ]
    # no temporary directory left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "source"]


def test_a_failed_conversion_writes_nothing(tmp_path):
    source = encoder_checkpoint(tmp_path / "source")
    (source / "vocab.txt").unlink()
    (source / "vocab.txt").mkdir()  # copying it fails, after bert_config.json would be written
    with pytest.raises(tf.errors.InvalidArgumentError):
        convert(str(source), str(tmp_path / "out"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source"]


def test_an_output_dir_the_conversion_would_wrongly_replace_is_refused(tmp_path):
    source = encoder_checkpoint(tmp_path / "source")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep me\n")
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    cases = [
        (
            "source",
            "holds the input checkpoint, which the conversion "
            "would replace; choose another directory",
        ),
        (
            "other",
            "holds files a conversion does not write (notes.txt), which it would replace; choose "
            "an empty or new directory",
        ),
    ]
    assert script_failures(
        "convert_checkpoint.py",
        *(
            [f"--input_checkpoint={source}", f"--output_dir={tmp_path / output}", "--to=bert_tf"]
            for output, _ in cases
        ),
    ) == [
        (1, f"convert_checkpoint.py: error: --output_dir={tmp_path / output}: {message}")
        for output, message in cases
    ]
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before
