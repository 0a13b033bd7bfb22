"""BertConfig: google-research/bert's bert_config.json, read, checked and written back unchanged."""

import json

import pytest

from bert_test_utils import REPO, write_file
from bert_tf import BertConfig, ConfigError

STANDARD_SIZES = {  # name: (layers, hidden, heads)
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
    "medium": (8, 512, 8),
    "base": (12, 768, 12),
    "large": (24, 1024, 16),
}
# bert_config.json of the released BERT-Base, Uncased (google-research/bert), as it is.
GOOGLE_BASE_UNCASED = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}


@pytest.mark.parametrize("name", sorted(STANDARD_SIZES))
def test_standard_configs(name):
    config = BertConfig.from_json_file(REPO / "configs" / name / "bert_config.json")
    layers, hidden, heads = STANDARD_SIZES[name]
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (
        layers,
        hidden,
        heads,
    )
    assert config.intermediate_size == 4 * hidden
    assert config.vocab_size == 30522
    assert config.hidden_act == "gelu"


def test_google_config_round_trips_field_for_field(tmp_path):
    source = tmp_path / "bert_config.json"
    source.write_text(json.dumps(GOOGLE_BASE_UNCASED, indent=2))
    config = BertConfig.from_json_file(source)
    assert config.to_dict() == GOOGLE_BASE_UNCASED
    written = tmp_path / "written.json"
    config.to_json_file(written)
    assert json.loads(written.read_text()) == GOOGLE_BASE_UNCASED
    assert BertConfig.from_json_file(written) == config


def test_extra_keys_are_kept(tmp_path):
    values = dict(GOOGLE_BASE_UNCASED, directionality="bidi", pooler_fc_size=768)
    source = tmp_path / "bert_config.json"
    source.write_text(json.dumps(values))
    config = BertConfig.from_json_file(source)
    assert config.extra == {"directionality": "bidi", "pooler_fc_size": 768}
    assert config.to_dict() == values
    assert config.encoder_kwargs()["extra"] == config.extra  # a BertEncoder keeps them too


def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}: no such config file"


def test_bad_json(tmp_path):
    path = write_file(tmp_path / "bert_config.json", '{"vocab_size": 10,\n "hidden_size": }')
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}:2:17: invalid JSON (Expecting value)"


def test_wrong_field_value(tmp_path):
    path = write_file(
        tmp_path / "bert_config.json", json.dumps(dict(GOOGLE_BASE_UNCASED, hidden_size=-768))
    )
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}: field 'hidden_size' must be a positive integer, got -768"


def test_wrong_field_type(tmp_path):
    path = write_file(
        tmp_path / "bert_config.json", json.dumps(dict(GOOGLE_BASE_UNCASED, num_hidden_layers="12"))
    )
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}: field 'num_hidden_layers' must be a positive integer, got '12'"


def test_unknown_activation(tmp_path):
    path = write_file(
        tmp_path / "bert_config.json", json.dumps(dict(GOOGLE_BASE_UNCASED, hidden_act="gelu_fast"))
    )
    with pytest.raises(
        ConfigError, match=rf"^{path}: field 'hidden_act' must be one of gelu, .*; got 'gelu_fast'$"
    ):
        BertConfig.from_json_file(path)


def test_inconsistent_head_count(tmp_path):
    path = write_file(
        tmp_path / "bert_config.json", json.dumps(dict(GOOGLE_BASE_UNCASED, num_attention_heads=10))
    )
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}: field 'num_attention_heads' (10) must divide hidden_size (768)"


def test_missing_vocab_size(tmp_path):
    values = dict(GOOGLE_BASE_UNCASED)
    del values["vocab_size"]
    path = write_file(tmp_path / "bert_config.json", json.dumps(values))
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(path)
    assert str(e.value) == f"{path}: field 'vocab_size' is missing"


def test_bad_dropout():
    with pytest.raises(ConfigError, match="field 'hidden_dropout_prob' must be a probability"):
        BertConfig(vocab_size=10, hidden_dropout_prob=1.5)


def test_write_is_atomic_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out.json"
    BertConfig(**GOOGLE_BASE_UNCASED).to_json_file(path)
    written = path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    # A value JSON cannot write, sorted last: a streamed write would fail midway through the file.
    broken = BertConfig(**GOOGLE_BASE_UNCASED, extra={"zz_unwritable": object()})
    with pytest.raises(TypeError):
        broken.to_json_file(path)
    assert path.read_text() == written  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_vocab_with_more_tokens_than_the_model_is_refused_and_one_with_fewer_warned(caplog):
    config = BertConfig(
        vocab_size=100,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
    )
    with pytest.raises(
        ConfigError,
        match=r"^`vocab_file`=cased/vocab.txt has 101 tokens, more "
        r"than the model's vocab_size 100: is it the vocab",
    ):
        config.check_vocab_size(101, "cased/vocab.txt")
    config.check_vocab_size(100, "vocab.txt")
    assert not caplog.records
    config.check_vocab_size(99, "other/vocab.txt")
    assert (
        "--vocab_file=other/vocab.txt has 99 tokens, the model's vocab_size is 100" in caplog.text
    )
