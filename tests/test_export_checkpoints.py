"""The export's checkpoint path takes the task head from each format or refuses; the Python API
builds the model it is given and checks its sequence length."""

import json
import logging
import re

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from bert_test_utils import TINY, random_encoder_inputs, tiny_config, tiny_encoder, write_word_vocab
from bert_tf import ConfigError
from bert_tf.checkpoints import load_checkpoint, write_tf1_checkpoint
from bert_tf.checkpoints.bert_tf_checkpoint import HEAD_LAYERS
from bert_tf.checkpoints.convert import convert
from bert_tf.checkpoints.loader import LoadReport
from bert_tf.checkpoints.task_heads import checkpoint_heads, task_model_type
from bert_tf.checkpoints.tf1_names import tf1_variables
from bert_tf.export import export_hub_pair, export_task_model, hub_export
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.export.encoder_export import ENCODER_SPEC, EncoderExport
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.tokenization import BertTokenizer
from checkpoint_test_utils import randomize_weights


def with_random_weights(model):
    model.build_with_dummy_inputs()
    randomize_weights(model)
    return model


def fine_tuned(directory, model) -> str:
    """`model` saved as fine-tuning keeps its best weights (`best/ckpt`); returns the prefix."""
    save_model_checkpoint(model, str(directory), {})
    return str(directory / "ckpt")


def assert_same_outputs(got, expected, leading_shape=(2,)):
    inputs = random_encoder_inputs(int(np.prod(leading_shape)), 8, TINY["vocab_size"])
    inputs = {name: value.reshape(*leading_shape, 8) for name, value in inputs.items()}
    for name, value in expected(inputs).items():
        np.testing.assert_allclose(got(inputs)[name], value, atol=1e-5)


def no_head(checkpoint, model_type, looked_for, holds=None):
    """The error for a checkpoint without a `model_type` head, holding a head of type `holds` (or
    none, or "masked_lm": a pretraining checkpoint)."""
    advice = {
        None: "export it with the `model_type` it was fine-tuned for",
        "masked_lm": "it is a pretraining checkpoint: export it "
        "with `model_type`=hub, or fine-tune it first",
    }.get(holds, f"it holds a {holds} head: export it with `model_type`={holds}")
    return (
        rf"^{re.escape(str(checkpoint))}: no {model_type} head "
        rf"\({re.escape(looked_for)}\); {re.escape(advice)}$"
    )


def test_a_fine_tuned_classifier_gives_its_head_and_its_width(tmp_path):
    model = with_random_weights(BertClassifier(tiny_encoder(), num_classes=3))
    prefix = fine_tuned(tmp_path / "best", model)
    exported = model_from_checkpoint(prefix, "classifier", tiny_config())
    assert exported.num_classes == 3
    assert_same_outputs(exported, model)
    with pytest.raises(
        ValueError,
        match=r"^`num_classes`=2 \(or the number of `labels`\) does "
        rf"not fit {re.escape(prefix)}: its classifier head has 3 "
        r"classes$",
    ):
        model_from_checkpoint(prefix, "classifier", tiny_config(), num_classes=2)
    for model_type, looked_for in (
        ("span", "cls/squad/..., Hugging Face qa_outputs or a bert_tf span model"),
        (
            "multiple_choice",
            "Hugging Face BertForMultipleChoice or a bert_tf multiple-choice model",
        ),
        ("token", "Hugging Face BertForTokenClassification or a bert_tf token classifier"),
    ):
        with pytest.raises(
            ValueError, match=no_head(prefix, model_type, looked_for, holds="classifier")
        ):
            model_from_checkpoint(prefix, model_type, tiny_config())


@pytest.mark.parametrize(
    "model_class, model_type, leading_shape",
    [(BertSpanLabeler, "span", (2,)), (BertMultipleChoice, "multiple_choice", (1, 2))],
)
def test_a_fine_tuned_span_or_choice_model_gives_its_head_and_no_classifier(
    tmp_path, model_class, model_type, leading_shape
):
    model = with_random_weights(model_class(tiny_encoder()))
    prefix = fine_tuned(tmp_path / "best", model)
    assert_same_outputs(
        model_from_checkpoint(prefix, model_type, tiny_config()), model, leading_shape
    )
    # the head is taken, not unused
    assert load_checkpoint(prefix, model_class(tiny_encoder())).unused == []
    looked_for = "output_weights, Hugging Face classifier or a bert_tf classifier"
    with pytest.raises(
        ValueError, match=no_head(prefix, "classifier", looked_for, holds=model_type)
    ):
        model_from_checkpoint(prefix, "classifier", tiny_config(), num_classes=2)


def test_a_fine_tuned_token_classifier_is_not_a_sentence_classifier(tmp_path):
    model = with_random_weights(BertTokenClassifier(tiny_encoder(), num_classes=3))
    prefix = fine_tuned(tmp_path / "best", model)
    assert_same_outputs(model_from_checkpoint(prefix, "token", tiny_config()), model)
    assert load_checkpoint(prefix, BertTokenClassifier(tiny_encoder(), num_classes=3)).unused == []
    looked_for = "output_weights, Hugging Face classifier or a bert_tf classifier"
    with pytest.raises(ValueError, match=no_head(prefix, "classifier", looked_for, holds="token")):
        model_from_checkpoint(prefix, "classifier", tiny_config())


def test_checkpoints_without_a_task_head_are_refused(tmp_path):
    encoder = tiny_encoder()
    tf1 = tmp_path / "tf1" / "bert_model.ckpt"  # google-research/bert's pretraining-only release
    write_tf1_checkpoint(encoder, tf1)
    converted = tf.train.Checkpoint(encoder=encoder).write(str(tmp_path / "converted" / "ckpt"))
    # with the masked-LM head, as Google's releases
    pretrained = tmp_path / "pretrained" / "bert_model.ckpt"
    write_tf1_checkpoint(with_random_weights(BertPretrainer(tiny_encoder())), pretrained)
    for checkpoint, model_type, looked_for, holds in (
        (
            tf1,
            "classifier",
            "output_weights, Hugging Face classifier or a bert_tf classifier",
            None,
        ),
        (converted, "span", "cls/squad/..., Hugging Face qa_outputs or a bert_tf span model", None),
        (
            pretrained,
            "classifier",
            "output_weights, Hugging Face classifier or a bert_tf classifier",
            "masked_lm",
        ),
    ):
        with pytest.raises(ValueError, match=no_head(checkpoint, model_type, looked_for, holds)):
            model_from_checkpoint(
                str(checkpoint), model_type, tiny_config(), num_classes=2, labels=["a", "b"]
            )


def test_a_tf1_sentence_classifier_is_not_a_token_classifier(tmp_path):
    model = with_random_weights(BertClassifier(tiny_encoder(), num_classes=2))
    prefix = tmp_path / "bert_model.ckpt"
    write_tf1_checkpoint(
        model,
        prefix,
        heads={
            "classifier": {
                "kernel": model.classifier.kernel.numpy(),
                "bias": model.classifier.bias.numpy(),
            }
        },
    )
    assert_same_outputs(model_from_checkpoint(str(prefix), "classifier", tiny_config()), model)
    looked_for = "Hugging Face BertForTokenClassification or a bert_tf token classifier"
    with pytest.raises(ValueError, match=no_head(prefix, "token", looked_for, holds="classifier")):
        model_from_checkpoint(str(prefix), "token", tiny_config())


def write_hugging_face(directory, model, architecture):
    """`model` (a sentence, token or multiple-choice classifier) as
    transformers saves it, `classifier` head included; a multiple-choice
    head gets the bias that transformers gives it (ours has none)."""
    head = getattr(model, HEAD_LAYERS[task_model_type(model)])
    bias = head.bias.numpy() if head.use_bias else np.full([1], 0.7, np.float32)
    state = {"classifier.weight": head.kernel.numpy().T, "classifier.bias": bias}
    for name, entry in tf1_variables(model).items():
        name = re.sub(r"layer_(\d+)", r"layer.\1", name).replace("/", ".")
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
            "LayerNorm.beta", "LayerNorm.bias"
        )
        value = entry.numpy()
        if name.endswith(".kernel"):
            name, value = name.removesuffix(".kernel") + ".weight", value.T
        state[name if not name.endswith("_embeddings") else name + ".weight"] = value
    directory.mkdir()
    save_file(
        {name: np.ascontiguousarray(value) for name, value in state.items()},
        str(directory / "model.safetensors"),
    )
    (directory / "config.json").write_text(
        json.dumps({**TINY, "model_type": "bert", "architectures": [architecture]})
    )


def test_a_hugging_face_classifier_is_a_token_head_only_from_a_token_classifier(tmp_path):
    tagger = with_random_weights(BertTokenClassifier(tiny_encoder(), num_classes=3))
    write_hugging_face(tmp_path / "tagger", tagger, "BertForTokenClassification")
    assert_same_outputs(
        model_from_checkpoint(str(tmp_path / "tagger"), "token", tiny_config()), tagger
    )
    looked_for = "output_weights, Hugging Face classifier or a bert_tf classifier"
    with pytest.raises(
        ValueError, match=no_head(tmp_path / "tagger", "classifier", looked_for, holds="token")
    ):
        model_from_checkpoint(str(tmp_path / "tagger"), "classifier", tiny_config())
    # Converted to TF1, it has no head, rather than a sentence classifier's output_weights.
    convert(str(tmp_path / "tagger"), str(tmp_path / "tagger_tf1"))
    assert not load_checkpoint(
        str(tmp_path / "tagger_tf1"), BertEncoder.from_bert_config(tiny_config())
    ).heads

    classifier = with_random_weights(BertClassifier(tiny_encoder(), num_classes=3))
    write_hugging_face(tmp_path / "classifier", classifier, "BertForSequenceClassification")
    assert_same_outputs(
        model_from_checkpoint(str(tmp_path / "classifier"), "classifier", tiny_config()), classifier
    )
    looked_for = "Hugging Face BertForTokenClassification or a bert_tf token classifier"
    with pytest.raises(
        ValueError, match=no_head(tmp_path / "classifier", "token", looked_for, holds="classifier")
    ):
        model_from_checkpoint(str(tmp_path / "classifier"), "token", tiny_config())


def test_a_hugging_face_multiple_choice_head_is_a_multiple_choice_head(tmp_path):
    """Its `classifier` scores each choice; its bias adds the same to every choice, so the model
    without one gives the same probabilities."""
    chooser = with_random_weights(BertMultipleChoice(tiny_encoder()))
    write_hugging_face(tmp_path / "swag", chooser, "BertForMultipleChoice")
    loaded = model_from_checkpoint(str(tmp_path / "swag"), "multiple_choice", tiny_config())
    assert_same_outputs(loaded, chooser, leading_shape=(1, 2))
    looked_for = "output_weights, Hugging Face classifier or a bert_tf classifier"
    with pytest.raises(
        ValueError,
        match=no_head(tmp_path / "swag", "classifier", looked_for, holds="multiple_choice"),
    ):
        model_from_checkpoint(str(tmp_path / "swag"), "classifier", tiny_config())
    # no TF1 names: no head, not output_weights
    convert(str(tmp_path / "swag"), str(tmp_path / "swag_tf1"))
    assert not load_checkpoint(
        str(tmp_path / "swag_tf1"), BertEncoder.from_bert_config(tiny_config())
    ).heads


def test_a_corrupt_hugging_face_config_is_a_one_line_error_naming_it(tmp_path):
    """A Hugging Face token or sentence head is told by config.json: a broken one is named."""
    (tmp_path / "config.json").write_text('{"architectures": ["BertForTokenClassification"]')
    head = {"kernel": np.zeros([64, 3], np.float32), "bias": np.zeros([3], np.float32)}
    report = LoadReport(
        str(tmp_path / "model.safetensors"),
        "hf_safetensors",
        [],
        [],
        [],
        [],
        {"classifier": head},
        None,
    )
    with pytest.raises(
        ConfigError,
        match=rf"^{re.escape(str(tmp_path))}/config.json:1:49: invalid JSON "
        r"\(Expecting ',' delimiter\)$",
    ):
        checkpoint_heads(report)


def test_a_keras_file_gives_the_head_of_its_own_model_type(tmp_path):
    model = with_random_weights(BertTokenClassifier(tiny_encoder(), num_classes=3))
    model.save(tmp_path / "tagger.keras")
    assert_same_outputs(
        model_from_checkpoint(str(tmp_path / "tagger.keras"), "token", tiny_config()), model
    )
    looked_for = "output_weights, Hugging Face classifier or a bert_tf classifier"
    with pytest.raises(
        ValueError,
        match=no_head(tmp_path / "tagger.keras", "classifier", looked_for, holds="token"),
    ):
        model_from_checkpoint(str(tmp_path / "tagger.keras"), "classifier", tiny_config())


@pytest.fixture
def tokenizer(tmp_path):
    return BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", ["a fine day"]))


def test_export_task_model_builds_a_model_that_only_loaded_its_encoder(tmp_path, tokenizer):
    write_tf1_checkpoint(
        with_random_weights(BertClassifier(tiny_encoder(), 2)), tmp_path / "bert_model.ckpt"
    )
    model = BertClassifier(tiny_encoder(), 2)
    load_checkpoint(tmp_path / "bert_model.ckpt", model)
    assert not model.built
    loaded = tf.saved_model.load(
        export_task_model(model, tmp_path / "export", tokenizer=tokenizer, seq_length=16)
    )
    inputs = random_encoder_inputs(2, 8, tokenizer.vocab_size)
    got = loaded.signatures["serving_default"](
        **{name: tf.constant(v) for name, v in inputs.items()}
    )
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=1e-5)


def test_seq_length_beyond_the_positions_is_refused_by_the_python_api(tmp_path, tokenizer):
    encoder = tiny_encoder()  # max_position_embeddings 64
    message = r"^`max_seq_length`=65 exceeds the model's max_position_embeddings 64$"
    with pytest.raises(ValueError, match=message):
        export_task_model(
            BertClassifier(encoder, 2), tmp_path / "task", tokenizer=tokenizer, seq_length=65
        )
    with pytest.raises(ValueError, match=message):
        export_hub_pair(encoder, tmp_path / "hub", tokenizer=tokenizer, seq_length=65)
    assert not (tmp_path / "task").exists() and not (tmp_path / "hub").exists()


def test_an_export_replaces_an_earlier_export_but_nothing_else(tmp_path, tokenizer):
    model = BertClassifier(tiny_encoder(), 2)
    export_task_model(model, tmp_path / "export", tokenizer=tokenizer, seq_length=16)
    # an export: replaced
    export_task_model(model, tmp_path / "export", tokenizer=tokenizer, seq_length=16)
    run_dir = tmp_path / "run"  # say a fine-tuning --output_dir given as --export_dir too
    (run_dir / "best").mkdir(parents=True)
    (run_dir / "eval_results.txt").write_text("accuracy = 0.9\n")
    with pytest.raises(
        ValueError, match=f"^`export_dir`={run_dir}: holds files that are not a SavedModel"
    ):
        export_task_model(model, run_dir, tokenizer=tokenizer, seq_length=16)
    assert sorted(p.name for p in run_dir.iterdir()) == ["best", "eval_results.txt"]


def test_a_vocab_beyond_the_model_is_refused(tmp_path):
    big = BertTokenizer(
        write_word_vocab(tmp_path / "vocab.txt", [f"w{i}" for i in range(TINY["vocab_size"])])
    )
    message = (
        rf"^`vocab_file`=.*vocab.txt has {len(big.vocab)} "
        r"tokens, more than the model's vocab_size 97"
    )
    with pytest.raises(ValueError, match=message):
        export_task_model(
            BertClassifier(tiny_encoder(), 2), tmp_path / "task", tokenizer=big, seq_length=16
        )
    with pytest.raises(ValueError, match=message):
        export_hub_pair(tiny_encoder(), tmp_path / "hub", tokenizer=big, seq_length=16)


def classifier_checkpoint(directory) -> tuple[BertEncoder, str]:
    """A fine-tuned classifier's checkpoint: (its encoder, the prefix)."""
    model = with_random_weights(BertClassifier(tiny_encoder(), 2))
    return model.encoder, fine_tuned(directory / "best", model)


def tf1_encoder_checkpoint(directory) -> tuple[BertEncoder, str]:
    """An encoder-only TF1 checkpoint: (the encoder, the prefix)."""
    encoder = tiny_encoder()  # built with its variables
    randomize_weights(encoder)
    return encoder, write_tf1_checkpoint(encoder, directory / "tf1" / "bert_model.ckpt")


@pytest.mark.parametrize("write", [classifier_checkpoint, tf1_encoder_checkpoint])
def test_a_checkpoint_without_masked_lm_weights_exports_no_mlm(tmp_path, tokenizer, caplog, write):
    encoder, checkpoint = write(tmp_path)
    with caplog.at_level(logging.WARNING, logger="absl"):
        model = model_from_checkpoint(checkpoint, "hub", tiny_config())
    assert (
        f"{checkpoint} has no masked-LM weights "
        "(cls/predictions/...): exporting the encoder without mlm"
    ) in caplog.messages
    loaded = tf.saved_model.load(
        export_hub_pair(model, tmp_path / "hub", tokenizer=tokenizer, seq_length=16)["encoder"]
    )
    assert not hasattr(loaded, "mlm")  # rather than one with random weights
    inputs = random_encoder_inputs(2, 8, TINY["vocab_size"])
    np.testing.assert_allclose(
        loaded(inputs)["pooled_output"], encoder(inputs)["pooled_output"], atol=1e-5
    )


def test_a_hub_export_refused_for_one_part_writes_neither(tmp_path, tokenizer):
    (tmp_path / "export" / "encoder").mkdir(parents=True)
    (tmp_path / "export" / "encoder" / "notes.txt").write_text("not an export\n")
    message = (
        rf"^`export_dir`={re.escape(str(tmp_path / 'export'))}: "
        r"its encoder/ holds files that are not "
        "a SavedModel, which the export would replace; choose an empty or new directory$"
    )
    with pytest.raises(ValueError, match=message):
        export_hub_pair(tiny_encoder(), tmp_path / "export", tokenizer=tokenizer, seq_length=16)
    # no preprocessing/ beside it
    assert [p.name for p in (tmp_path / "export").iterdir()] == ["encoder"]


def test_a_hub_export_dir_holding_other_files_is_refused(tmp_path, tokenizer):
    message = (
        rf"^`export_dir`={re.escape(str(tmp_path))}: holds "
        r"files other than preprocessing/ and encoder/ "
        r"\(vocab.txt\), which the export would replace; choose an empty or new directory$"
    )
    with pytest.raises(ValueError, match=message):  # the pair replaces the directory as a whole
        export_hub_pair(tiny_encoder(), tmp_path, tokenizer=tokenizer, seq_length=16)
    assert [p.name for p in tmp_path.iterdir()] == ["vocab.txt"]


class UnsaveableEncoderExport(EncoderExport):
    """An encoder export whose serving signature cannot be traced: saving it fails."""

    @tf.function(autograph=False, input_signature=[ENCODER_SPEC])
    def serve(self, inputs):
        raise ValueError("this encoder cannot be saved")


def files_under(directory) -> dict:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


def test_a_hub_export_that_fails_midway_leaves_the_earlier_pair_whole(
    tmp_path, tokenizer, monkeypatch
):
    export_dir = tmp_path / "export"
    export_hub_pair(tiny_encoder(), export_dir, tokenizer=tokenizer, seq_length=16)
    earlier = files_under(export_dir)
    monkeypatch.setattr(hub_export, "EncoderExport", UnsaveableEncoderExport)
    # after its preprocessing/ is saved
    with pytest.raises(ValueError, match="^this encoder cannot be saved$"):
        export_hub_pair(tiny_encoder(), export_dir, tokenizer=tokenizer, seq_length=8)
    assert files_under(export_dir) == earlier  # both parts from the earlier export, not a mix
    # no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "vocab.txt"]


@pytest.mark.parametrize(
    "model_type, make",
    [
        # its text_pair signature packs two texts
        ("classifier", lambda: BertClassifier(tiny_encoder(), 2)),
        ("span", lambda: BertSpanLabeler(tiny_encoder())),
        ("multiple_choice", lambda: BertMultipleChoice(tiny_encoder())),
        ("hub", tiny_encoder),  # bert_pack_inputs takes two texts
    ],
)
def test_a_seq_length_too_short_for_two_texts_names_the_flag(tmp_path, tokenizer, model_type, make):
    export = export_hub_pair if model_type == "hub" else export_task_model
    message = (
        rf"^`max_seq_length`=3 is too short for `model_type`={model_type}: it packs two "
        r"texts into a sequence, which needs at least 4 \(\[CLS\], a \[SEP\] per text and "
        r"one token\)$"
    )
    with pytest.raises(ValueError, match=message):
        export(make(), tmp_path / "export", tokenizer=tokenizer, seq_length=3)
    assert not (tmp_path / "export").exists()


def test_a_token_classifier_exports_with_a_seq_length_of_3(tmp_path, tokenizer):
    path = export_task_model(
        BertTokenClassifier(tiny_encoder(), 2),
        tmp_path / "export",
        tokenizer=tokenizer,
        seq_length=3,
    )
    out = tf.saved_model.load(path).signatures["text"](text=tf.constant(["a fine"]))
    assert out["tokens"].numpy().tolist() == [[b"a"]]  # one token fits beside [CLS] and [SEP]
