"""Hugging Face checkpoints (safetensors, pytorch_model.bin) match a numpy BERT to 1e-5."""

import dataclasses
import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from bert_test_utils import TINY, random_encoder_inputs, run_script, write_word_vocab
from bert_tf import BertEncoder, BertPretrainer
from bert_tf.checkpoints import CheckpointError, checkpoint_config, load_checkpoint
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tasks.tagging import TaggingTask
from bert_tf.tokenization import BertTokenizer
from checkpoint_test_utils import hugging_face_config, hugging_face_state


def reference_bert(state, inputs, hidden_act="gelu", prefix="bert."):
    """BERT's forward pass in float64 numpy, straight from the Hugging Face weights."""
    w = {name.removeprefix(prefix): value.astype("float64") for name, value in state.items()}
    erf = np.vectorize(math.erf)
    activation = {
        "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
        "gelu_new": lambda x: (
            0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
        ),
    }[hidden_act]

    def linear(x, name):
        return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    def layer_norm(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[f"{name}.weight"] + w[f"{name}.bias"]

    ids, mask, types = inputs["input_word_ids"], inputs["input_mask"], inputs["input_type_ids"]
    batch, seq = ids.shape
    heads = TINY["num_attention_heads"]
    size = TINY["hidden_size"] // heads
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:seq]
        + w["embeddings.token_type_embeddings.weight"][types]
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -10000.0
    layers = []
    for i in range(TINY["num_hidden_layers"]):
        name = f"encoder.layer.{i}"
        q, k, v = (
            linear(x, f"{name}.attention.self.{p}")
            .reshape(batch, seq, heads, size)
            .transpose(0, 2, 1, 3)
            for p in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, -1)
        attention = layer_norm(
            x + linear(context, f"{name}.attention.output.dense"),
            f"{name}.attention.output.LayerNorm",
        )
        inner = activation(linear(attention, f"{name}.intermediate.dense"))
        x = layer_norm(
            attention + linear(inner, f"{name}.output.dense"), f"{name}.output.LayerNorm"
        )
        layers.append(x)
    pooled = np.tanh(linear(x[:, 0], "pooler.dense"))
    return {"sequence_output": x, "pooled_output": pooled, "encoder_outputs": layers}


def assert_matches_reference(encoder, state, hidden_act="gelu", prefix="bert."):
    inputs = random_encoder_inputs(3, 20, TINY["vocab_size"], lengths=[20, 11, 4], seed=7)
    got, expected = encoder(inputs), reference_bert(state, inputs, hidden_act, prefix)
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=1e-5)
    for a, b in zip(got["encoder_outputs"], expected["encoder_outputs"], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def write_hugging_face_dir(directory, state, hidden_act="gelu", file="model.safetensors"):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(hugging_face_config(hidden_act)))
    if file.endswith(".safetensors"):
        save_file(state, directory / file)
    else:
        import torch

        torch.save(
            {name: torch.from_numpy(value) for name, value in state.items()}, directory / file
        )
    return directory


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_new"])
def test_safetensors_for_pretraining(hidden_act, tmp_path):
    state = hugging_face_state(heads=("pretraining",))
    directory = write_hugging_face_dir(tmp_path / "bert-tiny", state, hidden_act)
    config = checkpoint_config(directory)
    assert config.hidden_act == hidden_act and config.vocab_size == TINY["vocab_size"]

    model = BertPretrainer(BertEncoder.from_bert_config(config))
    report = load_checkpoint(directory, model)
    assert_matches_reference(model.encoder, state, hidden_act)
    assert report.format == "hf_safetensors" and report.missing == report.unused == []
    assert report.skipped == [
        "bert.embeddings.position_ids",
        "cls.predictions.decoder.bias",
        "cls.predictions.decoder.weight",
    ]
    np.testing.assert_array_equal(
        model.next_sentence_head.kernel.numpy(), state["cls.seq_relationship.weight"].T
    )
    np.testing.assert_array_equal(
        model.masked_lm_head.transform.kernel.numpy(),
        state["cls.predictions.transform.dense.weight"].T,
    )


@pytest.mark.parametrize(
    "shard, index",
    [
        ("model-{}-of-00002.safetensors", "model.safetensors.index.json"),
        ("pytorch_model-{}-of-00002.bin", "pytorch_model.bin.index.json"),
    ],
    ids=["safetensors", "pytorch"],
)
def test_sharded_checkpoint(shard, index, tmp_path):
    state = hugging_face_state(heads=("pretraining",))
    names = sorted(state)
    shards = {shard.format("00001"): names[::2], shard.format("00002"): names[1::2]}
    directory = tmp_path / "sharded"
    for file, shard_names in shards.items():
        write_hugging_face_dir(directory, {name: state[name] for name in shard_names}, file=file)
    weight_map = {name: file for file, shard_names in shards.items() for name in shard_names}
    (directory / index).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))

    model = BertPretrainer(BertEncoder.from_bert_config(checkpoint_config(directory)))
    report = load_checkpoint(directory, model)
    assert report.path == f"{directory}/{index}" and report.missing == report.unused == []
    assert_matches_reference(model.encoder, state)
    np.testing.assert_array_equal(
        model.next_sentence_head.kernel.numpy(), state["cls.seq_relationship.weight"].T
    )


def test_safetensors_bare_bert_model(tmp_path):
    state = hugging_face_state(prefix="")
    directory = write_hugging_face_dir(tmp_path / "bert-model", state)
    encoder = BertEncoder.from_bert_config(checkpoint_config(directory))
    report = load_checkpoint(directory / "model.safetensors", encoder)
    assert_matches_reference(encoder, state, prefix="")
    assert len(report.loaded) == len(encoder.weights) and report.skipped == [
        "embeddings.position_ids"
    ]


def test_pytorch_bin_with_classifier_head(tmp_path):
    state = hugging_face_state(heads=("classifier",))
    directory = write_hugging_face_dir(
        tmp_path / "bert-classifier", state, file="pytorch_model.bin"
    )
    encoder = BertEncoder.from_bert_config(checkpoint_config(directory))
    report = load_checkpoint(directory, encoder)
    assert_matches_reference(encoder, state)
    assert report.format == "hf_pytorch" and report.unused == []
    np.testing.assert_array_equal(
        report.heads["classifier"]["kernel"], state["classifier.weight"].T
    )
    np.testing.assert_array_equal(report.heads["classifier"]["bias"], state["classifier.bias"])


class MakesADirectory:
    """Unpickling it creates `directory`: a side effect that shows whether it was unpickled."""

    def __init__(self, directory):
        self.directory = str(directory)

    def __reduce__(self):
        return os.mkdir, (self.directory,)


def test_pytorch_bin_never_unpickles_objects(tmp_path):
    import torch

    path, marker = tmp_path / "pytorch_model.bin", tmp_path / "unpickled"
    torch.save(
        {
            "bert.embeddings.word_embeddings.weight": torch.zeros(3),
            "payload": MakesADirectory(marker),
        },
        path,
    )
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path, BertEncoder(**TINY))
    assert not marker.exists()  # the payload never ran
    assert str(error.value) == (
        f"{path}: holds pickled objects other than tensors, refused "
        "(torch.load with weights_only=True)"
    )


# as some Hub MNLI models name them
MNLI_ID2LABEL = {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}


def write_named_classifier(directory, id2label):
    """A `BertForSequenceClassification` checkpoint whose config.json names its 3 classes."""
    state = hugging_face_state(heads=("classifier",))
    write_hugging_face_dir(directory, state)
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, "id2label": id2label}))
    return state


def test_a_classifier_head_carries_the_class_names_of_its_config(tmp_path):
    write_named_classifier(tmp_path / "named", MNLI_ID2LABEL)
    report = load_checkpoint(tmp_path / "named", BertEncoder(**TINY))
    assert report.heads["classifier"]["labels"] == ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
    write_named_classifier(
        tmp_path / "placeholders", {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
    )
    assert (
        "labels"
        not in load_checkpoint(tmp_path / "placeholders", BertEncoder(**TINY)).heads["classifier"]
    )


def test_a_named_token_classifier_tags_without_a_training_file(tmp_path):
    """A released Hugging Face tagger predicts with the tags its config.json names, with no training
    file to read them from; a training file must name the same tags, in any order."""
    directory = write_hugging_face_dir(tmp_path / "hf", hugging_face_state(heads=("classifier",)))
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(
        json.dumps(
            {
                **config,
                "architectures": ["BertForTokenClassification"],
                "id2label": {"0": "O", "1": "B-PER", "2": "I-PER"},
            }
        )
    )
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["john smith lives here"])
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.txt").write_text("John\nSmith\nlives\nhere\n")
    options = FineTuningOptions(
        data_dir=str(data),
        vocab_file=vocab,
        output_dir=str(tmp_path / "out"),
        do_predict=True,
        init_checkpoint=str(directory),
        max_seq_length=16,
    )
    task = TaggingTask(options, BertTokenizer(vocab))
    assert task.label_list == ["O", "B-PER", "I-PER"]
    run_finetuning(task, options)
    rows = [
        line.split(" ")
        for line in (tmp_path / "out" / "test_predictions.txt").read_text().splitlines()
    ]
    assert [row[0] for row in rows] == ["John", "Smith", "lives", "here"]
    assert {row[1] for row in rows} <= {"O", "B-PER", "I-PER"}

    (data / "train.txt").write_text("John B-PER\nSmith I-PER\nlives O\n")
    assert TaggingTask(options, BertTokenizer(vocab)).label_list == ["B-PER", "I-PER", "O"]
    (data / "train.txt").write_text("Paris B-LOC\nlives O\n")
    with pytest.raises(
        ValueError,
        match=f"^{data}/train.txt has the labels B-LOC, O, but the checkpoint was "
        f"fine-tuned on O, B-PER, I-PER \\({directory}\\)$",
    ):
        TaggingTask(options, BertTokenizer(vocab)).label_list


def test_a_named_head_is_reordered_to_the_task_labels_or_left_out(tmp_path):
    state = write_named_classifier(tmp_path / "hf", MNLI_ID2LABEL)
    order = [2, 0, 1]  # contradiction, entailment, neutral: GLUE's MNLI label ids
    vocab = write_word_vocab(tmp_path / "vocab.txt", ["a day"])
    options = FineTuningOptions(data_dir="unused", vocab_file=vocab, output_dir="unused")
    task = SentencePredictionTask(options, BertTokenizer(vocab), "MNLI")
    model = task.build_model(BertEncoder(**TINY))
    model.build_with_dummy_inputs()
    task.load_head(model, load_checkpoint(tmp_path / "hf", model).heads)
    np.testing.assert_array_equal(
        model.classifier.kernel.numpy(), state["classifier.weight"][order].T
    )
    evaluating = dataclasses.replace(options, do_eval=True, init_checkpoint=str(tmp_path / "hf"))
    assert list(SentencePredictionTask(evaluating, BertTokenizer(vocab), "MNLI").label_list) == [
        "contradiction",
        "entailment",
        "neutral",
    ]
    np.testing.assert_array_equal(model.classifier.bias.numpy(), state["classifier.bias"][order])

    # Export: --labels reorders the same way; classes the head does not predict are an error.
    config = checkpoint_config(tmp_path / "hf")
    exported = model_from_checkpoint(
        str(tmp_path / "hf"),
        "classifier",
        config,
        labels=["contradiction", "entailment", "neutral"],
    )
    np.testing.assert_array_equal(exported.classifier.bias.numpy(), state["classifier.bias"][order])
    with pytest.raises(
        ValueError,
        match=r"^.*hf: its classifier head predicts ENTAILMENT, NEUTRAL, "
        r"CONTRADICTION, not yes, no, maybe$",
    ):
        model_from_checkpoint(
            str(tmp_path / "hf"), "classifier", config, labels=["yes", "no", "maybe"]
        )

    # Fine-tuning on other classes: the head starts fresh.
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "train.csv").write_text("text,label\na,no\na,yes\na,maybe\n")
    other = SentencePredictionTask(
        dataclasses.replace(options, data_dir=str(tmp_path / "csv")), BertTokenizer(vocab), "csv"
    )
    model = other.build_model(BertEncoder(**TINY))
    model.build_with_dummy_inputs()
    fresh_bias = model.classifier.bias.numpy()
    other.load_head(model, load_checkpoint(tmp_path / "hf", model).heads)
    np.testing.assert_array_equal(model.classifier.bias.numpy(), fresh_bias)


def test_export_names_the_classes_as_the_checkpoint_does(tmp_path):
    write_named_classifier(tmp_path / "hf", MNLI_ID2LABEL)
    vocab = tmp_path / "vocab.txt"  # the model's 97 ids: the special tokens, then filler words
    vocab.write_text(
        "\n".join(
            ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            + [f"word{i}" for i in range(TINY["vocab_size"] - 5)]
        )
        + "\n"
    )
    result = run_script(
        "export_model.py",
        "--model_type=classifier",
        f"--init_checkpoint={tmp_path / 'hf'}",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        f"--export_dir={tmp_path / 'export'}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    text = tf.saved_model.load(str(tmp_path / "export")).signatures["text"](
        text_a=tf.constant(["word1 word2"])
    )
    names = [b"ENTAILMENT", b"NEUTRAL", b"CONTRADICTION"]
    assert text["label"].numpy().tolist() == [names[int(text["probabilities"].numpy().argmax())]]
