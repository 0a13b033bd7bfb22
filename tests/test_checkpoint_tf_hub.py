"""TF Hub encoder SavedModels (Model Garden's export_tfhub, bert_tf's hub export) as checkpoints."""

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    TINY,
    assert_encoder_outputs_close,
    random_encoder_inputs,
    tiny_encoder,
    write_word_vocab,
)
from bert_tf import BertEncoder, BertPretrainer
from bert_tf.checkpoints import (
    CheckpointError,
    checkpoint_config,
    checkpoint_files,
    load_checkpoint,
)
from bert_tf.checkpoints.checkpoint_flags import take_vocab_from_checkpoint
from bert_tf.checkpoints.convert import convert
from bert_tf.checkpoints.hub_saved_model import hub_do_lower_case, hub_vocab_file
from bert_tf.export.encoder_export import EncoderExport
from checkpoint_test_utils import GOOGLE_CONFIG, randomize_weights

INPUTS = random_encoder_inputs(3, 20, TINY["vocab_size"], lengths=[20, 11, 4], seed=3)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    return write_word_vocab(
        tmp_path_factory.mktemp("vocab") / "vocab.txt", ["the cat sat on a mat"]
    )


@pytest.fixture(scope="module")
def model_garden_export(tmp_path_factory, vocab):
    """A tiny encoder exported by Model Garden's export_tfhub library, as its tool does."""
    from official.legacy.bert import configs
    from official.nlp.tools import export_tfhub_lib

    directory = tmp_path_factory.mktemp("model_garden")
    config = configs.BertConfig.from_dict(
        {**GOOGLE_CONFIG, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    )
    encoder = export_tfhub_lib.get_bert_encoder(config)
    randomize_weights(encoder, seed=11)
    prefix = tf.train.Checkpoint(encoder=encoder).save(str(directory / "ckpt"))
    export_tfhub_lib.export_model(
        str(directory / "hub"),
        bert_config=config,
        model_checkpoint_path=prefix,
        with_mlm=False,
        vocab_file=vocab,
        do_lower_case=False,
    )
    return str(directory / "hub")


@pytest.fixture(scope="module")
def bert_tf_export(tmp_path_factory, vocab):
    """A tiny pretrainer's encoder SavedModel, as export_hub_pair writes it (no preprocessing)."""
    directory = str(tmp_path_factory.mktemp("bert_tf") / "encoder")
    model = BertPretrainer(tiny_encoder())
    model.build_with_dummy_inputs()
    randomize_weights(model, seed=12)
    tf.saved_model.save(EncoderExport(model, vocab, do_lower_case=True), directory)
    return directory


def _saved_model_outputs(path):
    return tf.saved_model.load(path)(INPUTS, training=False)


def test_model_garden_export_loads_with_the_saved_models_outputs(model_garden_export, vocab):
    config = checkpoint_config(model_garden_export)
    # Model Garden's "gelu"
    assert (config.num_attention_heads, config.hidden_act) == (4, "gelu_approximate")
    encoder = BertEncoder.from_bert_config(config)
    report = load_checkpoint(model_garden_export, encoder)
    assert_encoder_outputs_close(encoder(INPUTS), _saved_model_outputs(model_garden_export))
    assert report.format == "tf_hub" and report.missing == [] and report.unused == []
    assert report.skipped == ["do_lower_case"]
    assert open(hub_vocab_file(model_garden_export)).read() == open(vocab).read()
    assert hub_do_lower_case(model_garden_export) is False
    assert any(path.endswith("saved_model.pb") for path in checkpoint_files(model_garden_export))


def test_model_garden_export_with_mlm_gives_its_masked_lm_head(vocab, tmp_path):
    from official.legacy.bert import configs
    from official.modeling import tf_utils
    from official.nlp.modeling import models
    from official.nlp.tools import export_tfhub_lib

    config = configs.BertConfig.from_dict(
        {**GOOGLE_CONFIG, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    )
    pretrainer = models.BertPretrainerV2(
        encoder_network=export_tfhub_lib.get_bert_encoder(config),
        mlm_activation=tf_utils.get_activation("gelu"),
    )
    pretrainer(pretrainer.inputs)  # creates the masked-LM head's weights
    randomize_weights(pretrainer, seed=13)
    prefix = tf.train.Checkpoint(**pretrainer.checkpoint_items).save(str(tmp_path / "ckpt"))
    export_tfhub_lib.export_model(
        str(tmp_path / "hub"),
        bert_config=config,
        model_checkpoint_path=prefix,
        with_mlm=True,
        vocab_file=vocab,
        do_lower_case=True,
    )

    model = BertPretrainer(BertEncoder.from_bert_config(checkpoint_config(tmp_path / "hub")))
    report = load_checkpoint(tmp_path / "hub", model)
    assert_pretrainer_matches_saved_model(model, tf.saved_model.load(str(tmp_path / "hub")))
    assert report.unused == []
    assert all(name.startswith("cls/seq_relationship/") for name in report.missing), report.missing


def test_bert_tf_export_loads_with_its_encoder_and_masked_lm(bert_tf_export):
    model = BertPretrainer(BertEncoder.from_bert_config(checkpoint_config(bert_tf_export)))
    report = load_checkpoint(bert_tf_export, model)
    assert_pretrainer_matches_saved_model(model, tf.saved_model.load(bert_tf_export))
    assert report.missing == [] and report.unused == [] and "save_counter" in report.skipped
    assert hub_do_lower_case(bert_tf_export) is True


@pytest.mark.parametrize("to", ["tf1", "bert_tf"])
def test_convert_turns_a_hub_export_into_a_checkpoint(model_garden_export, to, tmp_path):
    prefix = convert(model_garden_export, str(tmp_path / to), to=to)
    source = BertEncoder.from_bert_config(checkpoint_config(model_garden_export))
    load_checkpoint(model_garden_export, source)
    # tf1: Google's "gelu", its tanh form
    converted = BertEncoder.from_bert_config(checkpoint_config(prefix))
    load_checkpoint(prefix, converted)
    for ours, theirs in zip(converted.weights, source.weights, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    if to == "bert_tf":
        assert_encoder_outputs_close(converted(INPUTS), _saved_model_outputs(model_garden_export))
    assert (tmp_path / to / "vocab.txt").read_text() == open(
        hub_vocab_file(model_garden_export)
    ).read()


def test_a_saved_model_that_is_no_bert_encoder_is_refused(tmp_path):
    module = tf.Module()
    module.weight = tf.Variable([1.0])
    tf.saved_model.save(module, str(tmp_path))
    with pytest.raises(CheckpointError, match="not a BERT encoder in the TF Hub layout"):
        load_checkpoint(tmp_path, tiny_encoder())


@pytest.mark.parametrize("given", [[], ["--vocab_file=mine.txt", "--do_lower_case"]])
def test_a_hub_init_checkpoint_gives_the_vocab_and_do_lower_case_not_given(
    model_garden_export, given
):
    from absl import flags

    flag_values = flags.FlagValues()
    flags.DEFINE_string("init_checkpoint", None, "", flag_values=flag_values)
    flags.DEFINE_string("vocab_file", None, "", flag_values=flag_values)
    flags.DEFINE_bool("do_lower_case", True, "", flag_values=flag_values)
    flag_values(["run_classifier.py", f"--init_checkpoint={model_garden_export}", *given])
    take_vocab_from_checkpoint(flag_values)
    # it records False
    expected = ("mine.txt", True) if given else (hub_vocab_file(model_garden_export), False)
    assert (flag_values.vocab_file, flag_values.do_lower_case) == expected


def assert_pretrainer_matches_saved_model(model, saved) -> None:
    """The encoder outputs and masked-LM logits of `model` equal those of the SavedModel `saved`."""
    assert_encoder_outputs_close(model.encoder(INPUTS), saved(INPUTS, training=False))
    positions = np.array([[1, 2], [3, 5], [1, 3]], "int32")
    features = {
        "input_ids": INPUTS["input_word_ids"],
        "input_mask": INPUTS["input_mask"],
        "segment_ids": INPUTS["input_type_ids"],
        "masked_lm_positions": positions,
    }
    np.testing.assert_allclose(
        model(features)["masked_lm_logits"],
        saved.mlm({**INPUTS, "masked_lm_positions": positions})["mlm_logits"],
        atol=1e-5,
    )
