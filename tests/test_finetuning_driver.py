"""The shared fine-tuning driver, on a small learnable task, and its options."""

import dataclasses
import json
import logging
import os
import pathlib
import re
import subprocess
import sys
from unittest.mock import ANY

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    random_encoder_inputs,
    tiny_encoder,
    write_file,
    write_tiny_config,
    write_word_vocab,
)
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import load_checkpoint
from bert_tf.checkpoints.task_heads import (
    TASK_MODELS,
    checkpoint_heads,
    load_task_head,
    task_model_type,
)
from bert_tf.export.checkpoint_model import model_from_checkpoint
from bert_tf.finetuning import EncodedSplit, FineTuningOptions, FineTuningTask, run_finetuning
from bert_tf.finetuning.best_checkpoint import save_model_checkpoint
from bert_tf.finetuning.layer_depths import layer_depths
from bert_tf.finetuning.masked_lm_auxiliary import MaskedLMAuxiliary
from bert_tf.models import (
    BertClassifier,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.tokenization import BertTokenizer
from bert_tf.training import distribution, optimization
from bert_tf.training.layerwise_adamw import LayerwiseAdamW

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


class KeywordTask(FineTuningTask):
    """Label 1 when the text holds "alpha", else 0: learnable in a few epochs by a tiny model."""

    main_metric = "accuracy"

    def build_model(self, encoder):
        return BertClassifier(encoder, num_classes=2, dropout_rate=0.0)

    def loss(self, label_smoothing=0.0):
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def encode(self, split):
        rng = np.random.default_rng({"train": 0, "dev": 1, "test": 2}[split])
        texts, labels = [], []
        for _ in range(512 if split == "train" else 64):
            words = list(rng.choice(WORDS[1:], size=6))
            label = int(rng.integers(2))
            if label:
                words[rng.integers(6)] = "alpha"
            texts.append(" ".join(words))
            labels.append(label)
        features = self.tokenizer.pack_inputs(
            self.tokenizer.tokenize(texts), self.options.max_seq_length
        )
        return EncodedSplit({k: v.numpy() for k, v in features.items()}, np.array(labels, "int32"))

    def evaluate(self, split, encoded, outputs):
        return {"accuracy": float(np.mean(outputs["logits"].argmax(-1) == encoded.labels))}

    def write_predictions(self, split, encoded, outputs, output_dir):
        path = os.path.join(output_dir, f"{split}_predictions.txt")
        np.savetxt(path, outputs["logits"].argmax(-1), fmt="%d")
        return [path]


def _options(tmp_path, **overrides):
    vocab = write_word_vocab(tmp_path / "vocab.txt", WORDS)
    config = write_tiny_config(tmp_path, vocab_size=len(open(vocab).read().split()))
    values = dict(
        data_dir=str(tmp_path),
        vocab_file=vocab,
        output_dir=str(tmp_path / "out"),
        bert_config_file=config,
        do_train=True,
        do_eval=True,
        max_seq_length=12,
        train_batch_size=32,
        eval_batch_size=32,
        learning_rate=5e-3,
        num_train_epochs=3,
        verbose=0,
    )
    values.update(overrides)
    return FineTuningOptions(**values)


def test_learns_keeps_the_best_epoch_and_writes_results(tmp_path):
    options = _options(tmp_path, do_predict=True)
    task = KeywordTask(options, BertTokenizer(options.vocab_file))
    results = run_finetuning(task, options)
    assert results["accuracy"] > 0.9
    best = json.load(open(tmp_path / "out" / "best" / "metrics.json"))
    # eval used the best epoch's weights
    assert best["accuracy"] == pytest.approx(results["accuracy"])
    variables = [
        name for name, _ in tf.train.list_variables(str(tmp_path / "out" / "best" / "ckpt"))
    ]
    assert any(name.startswith("model/classifier/") for name in variables)
    assert not any("optimizer" in name for name in variables)  # weights only: no Adam slots
    assert (tmp_path / "out" / "best" / "bert_config.json").exists()
    assert "accuracy = " in (tmp_path / "out" / "eval_results.txt").read_text()
    assert len((tmp_path / "out" / "test_predictions.txt").read_text().split()) == 64

    # The best checkpoint is an --init_checkpoint for a later eval-only run.
    again = dict(
        do_train=False,
        init_checkpoint=str(tmp_path / "out" / "best" / "ckpt"),
        output_dir=str(tmp_path / "eval_only"),
    )
    options = _options(tmp_path, **again)
    assert (
        run_finetuning(KeywordTask(options, task.tokenizer), options)["accuracy"]
        == results["accuracy"]
    )
    # And the output_dir itself is enough: its best/ holds the weights and their bert_config.json.
    options = _options(tmp_path, do_train=False, bert_config_file=None)
    assert (
        run_finetuning(KeywordTask(options, task.tokenizer), options)["accuracy"]
        == results["accuracy"]
    )
    # A --bert_config_file of another architecture is
    # named, not left to a shape error in the restore.
    (tmp_path / "deeper").mkdir()
    deeper = write_tiny_config(
        tmp_path / "deeper", vocab_size=_vocab_size(tmp_path), num_hidden_layers=3
    )
    options = _options(tmp_path, do_train=False, bert_config_file=deeper)
    best = tmp_path / "out" / "best"
    source = re.escape(f"`bert_config_file`={deeper}: {best}/ckpt: the model")
    with pytest.raises(
        ValueError,
        match=f"^{source}'s "
        f"config does not match the checkpoint's: num_hidden_layers 3 in the model, "
        f"2 in {re.escape(str(best))}/bert_config.json$",
    ):
        run_finetuning(KeywordTask(options, task.tokenizer), options)


def test_a_bfloat16_run_exports_bfloat16_weights(tmp_path):
    options = _options(
        tmp_path, dtype="bfloat16", num_train_epochs=1, export_dir=str(tmp_path / "export")
    )
    task = KeywordTask(options, BertTokenizer(options.vocab_file))
    try:
        distribution.set_precision("bfloat16")  # as the run scripts do for --dtype
        run_finetuning(task, options)
    finally:
        distribution.set_precision("float32")
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    kernels = {v.name: v.dtype.name for v in loaded.model_variables if "kernel" in v.name}
    assert kernels and set(kernels.values()) == {"bfloat16"}, kernels
    # It computes what the run's best checkpoint, loaded in float32, does, to bfloat16's precision.
    best = tmp_path / "out" / "best"
    model = model_from_checkpoint(
        str(best / "ckpt"), "classifier", BertConfig.from_json_file(best / "bert_config.json")
    )
    inputs = random_encoder_inputs(4, 12, _vocab_size(tmp_path))
    got = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})[
        "logits"
    ]
    np.testing.assert_allclose(got, model(inputs)["logits"], atol=2e-3)


class FirstEpochScoresBest(KeywordTask):
    """KeywordTask whose score falls with each evaluation; keeps each evaluation's logits."""

    def __init__(self, options, tokenizer):
        super().__init__(options, tokenizer)
        self.logits = []

    def evaluate(self, split, encoded, outputs):
        self.logits.append(outputs["logits"])
        return {"accuracy": 1.0 / len(self.logits)}


def test_a_worse_later_epoch_leaves_the_best_epochs_weights(tmp_path):
    options = _options(tmp_path, num_train_epochs=2, train_batch_size=64)
    task = FirstEpochScoresBest(options, BertTokenizer(options.vocab_file))
    run_finetuning(task, options)
    epoch_1, epoch_2, final = task.logits
    assert not np.allclose(epoch_2, epoch_1, atol=1e-3)  # the second epoch changed the weights
    # the final evaluation has epoch 1's weights
    np.testing.assert_allclose(final, epoch_1, atol=1e-6)
    assert json.load(open(tmp_path / "out" / "best" / "metrics.json")) == {
        "accuracy": 1.0,
        "epoch": 1,
        "run_id": ANY,
    }


class TracedClassifier(BertClassifier):
    """BertClassifier counting its train step's traces (each runs `train_step` in Python)."""

    traces = 0

    def train_step(self, data):
        type(self).traces += 1
        return super().train_step(data)


class TracedTask(KeywordTask):
    def build_model(self, encoder):
        return TracedClassifier(encoder, num_classes=2, dropout_rate=0.0)


def test_the_train_step_is_traced_once(tmp_path):
    """The optimizer is built before training: built in the step's first trace, its variables would
    make TensorFlow trace the step again (twice the start-up time)."""
    options = _options(tmp_path, do_eval=False, num_train_epochs=2, train_batch_size=64)
    run_finetuning(TracedTask(options, BertTokenizer(options.vocab_file)), options)
    assert TracedClassifier.traces == 1


class ScoresConstant(KeywordTask):
    """KeywordTask whose every evaluation scores `score`."""

    score = 0.5

    def evaluate(self, split, encoded, outputs):
        return {"accuracy": self.score}


def test_a_new_run_in_the_same_output_dir_keeps_its_own_best(tmp_path):
    tokenizer = BertTokenizer(_options(tmp_path).vocab_file)
    best = tmp_path / "out" / "best" / "metrics.json"
    options = _options(tmp_path, do_eval=False, num_train_epochs=1, train_batch_size=64)
    run_finetuning(KeywordTask(options, tokenizer), options)
    assert json.load(open(best)) == {"epoch": 1}  # no evaluation: no metric recorded
    options = _options(tmp_path, num_train_epochs=1, train_batch_size=64)
    for score in (0.5, 0.25):  # a worse score than the earlier run's still replaces its best
        task = ScoresConstant(options, tokenizer)
        task.score = score
        run_finetuning(task, options)
        assert json.load(open(best)) == {"accuracy": score, "epoch": 1, "run_id": ANY}


def test_bad_options_fail_with_the_flag_named(tmp_path):
    options = _options(tmp_path, do_train=False, do_eval=False)
    with pytest.raises(ValueError, match="at least one of `do_train`"):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    options = _options(tmp_path, train_batch_size=1000)
    with pytest.raises(ValueError, match="fewer than `train_batch_size`=1000"):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    (tmp_path / "small").mkdir()
    options = _options(
        tmp_path, bert_config_file=write_tiny_config(tmp_path / "small", vocab_size=10)
    )
    with pytest.raises(
        ValueError,
        match=r"^`vocab_file`=.*vocab.txt has \d+ tokens, more than the "
        r"model's vocab_size 10",
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    options = _options(tmp_path, export_dir=str(tmp_path))  # the data: refused before training
    with pytest.raises(
        ValueError, match=f"^`export_dir`={tmp_path}: holds files that are not a SavedModel"
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    for epochs in (0, float("nan")):
        options = _options(tmp_path, num_train_epochs=epochs)
        with pytest.raises(
            ValueError, match=f"^`num_train_epochs` must be positive, got {epochs}$"
        ):
            run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    options = _options(tmp_path, bert_config_file=None)
    with pytest.raises(
        ValueError, match="^`bert_config_file` is required without `init_checkpoint`$"
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    missing = tmp_path / "missing" / "ckpt"
    options = _options(tmp_path, bert_config_file=None, init_checkpoint=str(missing))
    with pytest.raises(ValueError, match=f"^`init_checkpoint`={missing}: no such checkpoint"):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    options = _options(tmp_path, do_train=False)  # nothing to evaluate but random weights
    with pytest.raises(
        ValueError,
        match=r"^`do_eval` and `do_predict` without `do_train` need "
        r"`init_checkpoint` or a fine-tuned `output_dir`: .*out "
        r"has no best/ checkpoint$",
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    assert not (tmp_path / "out").exists()
    plain = write_file(tmp_path / "plain.txt", "not a folder\n")
    options = _options(tmp_path, output_dir=str(plain / "out"))
    with pytest.raises(
        ValueError,
        match=rf"^`output_dir`: cannot create the directory {plain}/out "
        rf"\({plain} is not a directory\)$",
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)


class NoTestFile(KeywordTask):
    """KeywordTask whose test split is missing, as a --data_dir without test.tsv is."""

    def encode(self, split):
        if split == "test":
            raise FileNotFoundError(f"{self.options.data_dir}/test.tsv: no such file")
        return super().encode(split)


def test_a_missing_input_fails_before_training_and_leaves_no_output_dir(tmp_path):
    options = _options(tmp_path, do_predict=True)
    with pytest.raises(FileNotFoundError, match="test.tsv: no such file"):
        run_finetuning(NoTestFile(options, BertTokenizer(options.vocab_file)), options)
    assert not (tmp_path / "out").exists()


def _vocab_size(tmp_path) -> int:
    return len(BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", WORDS)).vocab)


def _fine_tuned(directory, model) -> str:
    """`model` saved as a fine-tuning run keeps its best weights; returns the checkpoint prefix."""
    model.build_with_dummy_inputs()
    save_model_checkpoint(model, str(directory), {})
    return str(directory / "ckpt")


def test_evaluation_shows_progress_at_the_runs_verbosity(tmp_path, capsys):
    # An eval-only run needs fine-tuned weights: a classifier's.
    checkpoint = _fine_tuned(
        tmp_path / "fine_tuned", BertClassifier(tiny_encoder(vocab_size=_vocab_size(tmp_path)), 2)
    )
    for verbose in (0, 1):
        options = _options(
            tmp_path,
            do_train=False,
            verbose=verbose,
            output_dir=str(tmp_path / f"v{verbose}"),
            init_checkpoint=checkpoint,
        )
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
        # 64 dev examples in batches of 32
        shown = re.search(r"2/2\b.*/step", capsys.readouterr().out)
        assert bool(shown) == bool(verbose)


def test_an_eval_only_run_refuses_a_checkpoint_without_the_tasks_head(tmp_path, caplog):
    vocab_size = _vocab_size(tmp_path)
    pretrainer = BertPretrainer(tiny_encoder(vocab_size=vocab_size))
    pretrainer.build({"input_ids": (None, None), "masked_lm_positions": (None, None)})
    pretrained = tf.train.Checkpoint(model=pretrainer).write(str(tmp_path / "pretrained" / "ckpt"))
    tagger = _fine_tuned(
        tmp_path / "tagger", BertTokenClassifier(tiny_encoder(vocab_size=vocab_size), 2)
    )
    three_way = _fine_tuned(
        tmp_path / "three_way", BertClassifier(tiny_encoder(vocab_size=vocab_size), 3)
    )
    no_head = (
        r"no classifier head \(output_weights, Hugging Face classifier or a bert_tf classifier\)"
    )
    for checkpoint, problem in (
        (pretrained, no_head),
        (tagger, no_head),
        (
            three_way,
            r"its classifier head has shapes \[\(64, 3\), \(3,\)\], the model "
            r"needs \[\(64, 2\), \(2,\)\]",
        ),
    ):
        options = _options(
            tmp_path, do_train=False, init_checkpoint=checkpoint, output_dir=str(tmp_path / "eval")
        )
        with pytest.raises(
            ValueError,
            match=rf"^`init_checkpoint`={re.escape(checkpoint)}: "
            rf"{problem}, so this run would score an untrained "
            r"head; fine-tune it with `do_train`, or use a "
            r"checkpoint fine-tuned for this task$",
        ):
            run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
    assert not (tmp_path / "eval").exists()
    # An output_dir that holds a fine-tuned best/ is what the run likely meant: the error says so.
    fine_tuned = tmp_path / "fine_tuned"
    _fine_tuned(fine_tuned / "best", BertClassifier(tiny_encoder(vocab_size=vocab_size), 2))
    options = _options(
        tmp_path, do_train=False, init_checkpoint=pretrained, output_dir=str(fine_tuned)
    )
    with pytest.raises(
        ValueError,
        match=rf"^`init_checkpoint`={re.escape(pretrained)}: {no_head}, "
        r"so this run would score an untrained head; fine-tune "
        r"it with `do_train`, use a checkpoint fine-tuned for "
        r"this task, or leave out `init_checkpoint` to use "
        rf"{re.escape(str(fine_tuned / 'best'))}$",
    ):
        run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)

    # Fine-tuning from it starts the head fresh: with a warning for a head that does not fit, while
    # no head at all (a pretrained checkpoint, the usual start) is only noted.
    for checkpoint, level, problem in (
        (
            three_way,
            logging.WARNING,
            "its classifier head has shapes [(64, 3), (3,)], the model needs [(64, 2), (2,)]",
        ),
        (pretrained, logging.INFO, "no classifier head"),
    ):
        options = _options(
            tmp_path,
            init_checkpoint=checkpoint,
            num_train_epochs=1 / 16,  # one step: the message comes before training
            do_eval=False,
            output_dir=str(tmp_path / "train"),
        )
        caplog.clear()
        # absl's own level may be WARNING after other tests
        with caplog.at_level(logging.INFO, logger="absl"):
            run_finetuning(KeywordTask(options, BertTokenizer(options.vocab_file)), options)
        (record,) = [
            r for r in caplog.records if r.getMessage().endswith("; the head starts fresh")
        ]
        assert (
            record.getMessage().startswith(f"--init_checkpoint: {problem}")
            and record.levelno == level
        )


@pytest.mark.parametrize(
    "model_class, arguments",
    [
        (BertClassifier, (3,)),
        (BertTokenClassifier, (3,)),
        (BertSpanLabeler, ()),
        (BertMultipleChoice, ()),
    ],
)
def test_init_checkpoint_gives_a_task_model_its_fine_tuned_head(tmp_path, model_class, arguments):
    saved = model_class(tiny_encoder(), *arguments)
    checkpoint = _fine_tuned(tmp_path, saved)
    model = model_class(tiny_encoder(), *arguments)
    model.build_with_dummy_inputs()
    assert load_task_head(model, checkpoint_heads(load_checkpoint(checkpoint, model))) is None
    layer = TASK_MODELS[task_model_type(model)][1]
    for got, expected in zip(
        getattr(model, layer).weights, getattr(saved, layer).weights, strict=True
    ):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _one_step(optimizer, variables, step_count=1):
    grads = [tf.ones_like(v) for v in variables]
    for _ in range(step_count):
        optimizer.apply(grads, variables)


def test_layerwise_adamw_without_options_is_keras_adamw():
    encoder = tiny_encoder()
    reference = tiny_encoder()
    reference.set_weights(encoder.get_weights())
    ours = LayerwiseAdamW(layer_depths(encoder), 2, learning_rate=1e-2, weight_decay=0.01)
    keras_adamw = keras.optimizers.AdamW(learning_rate=1e-2, weight_decay=0.01)
    for optimizer in (ours, keras_adamw):
        optimizer.exclude_from_weight_decay(var_names=["bias"])
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=v.shape).astype("float32") for v in encoder.trainable_variables]
    for _ in range(3):
        ours.apply(grads, encoder.trainable_variables)
        keras_adamw.apply(grads, reference.trainable_variables)
    # Within float32 rounding: the fused kernel (FusedAdamW)
    # takes 1 - beta_2 in float32, Keras in float64.
    for a, b in zip(encoder.trainable_variables, reference.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_layerwise_decay_and_gradual_unfreezing_scale_each_layer():
    encoder = tiny_encoder()
    depths = layer_depths(encoder)
    word = encoder.embeddings.word_embeddings.embeddings  # depth 0
    top_block = encoder.transformer_layers[1].intermediate.kernel  # depth 2
    pooler = encoder.pooler.kernel  # depth 3, the top
    variables = [word, top_block, pooler]
    before = [v.numpy().copy() for v in variables]
    # Adam's first update is learning_rate * sign(gradient): the step shows each learning rate.
    _one_step(
        LayerwiseAdamW(depths, 2, layerwise_lr_decay=0.5, learning_rate=1e-2, weight_decay=0.0),
        variables,
    )
    steps = [np.abs(v.numpy() - b).max() for v, b in zip(variables, before)]
    np.testing.assert_allclose(steps, [1e-2 * 0.125, 1e-2 * 0.5, 1e-2], rtol=1e-3)

    before = [v.numpy().copy() for v in variables]
    optimizer = LayerwiseAdamW(
        depths, 2, unfreeze_every_steps=2, learning_rate=1e-2, weight_decay=0.0
    )
    _one_step(optimizer, variables, 2)  # steps 0 and 1: only the top trains
    assert [not np.array_equal(v.numpy(), b) for v, b in zip(variables, before)] == [
        False,
        False,
        True,
    ]
    _one_step(optimizer, variables, 4)  # block 1 from step 2, the embeddings from step 6
    assert [not np.array_equal(v.numpy(), b) for v, b in zip(variables, before)] == [
        False,
        True,
        True,
    ]
    _one_step(optimizer, variables, 1)
    assert not np.array_equal(word.numpy(), before[0])


def test_masked_lm_auxiliary_loss_only_in_training_and_loads_the_pretrained_head(tmp_path):
    vocab_file = write_word_vocab(tmp_path / "vocab.txt", WORDS)
    tokenizer = BertTokenizer(vocab_file)
    encoder = tiny_encoder(vocab_size=len(tokenizer.vocab))
    pretrainer = BertPretrainer(tiny_encoder(vocab_size=len(tokenizer.vocab)))
    pretrainer.build({"input_ids": (None, None), "masked_lm_positions": (None, None)})
    tf.train.Checkpoint(model=pretrainer).write(str(tmp_path / "ckpt"))

    model = MaskedLMAuxiliary(
        BertClassifier(encoder, 2, dropout_rate=0.0), tokenizer.vocab, weight=0.5, seed=1
    )
    model.build_with_dummy_inputs()
    report = load_checkpoint(str(tmp_path / "ckpt"), model)
    assert "cls/predictions/output_bias" in report.loaded
    np.testing.assert_allclose(
        model.masked_lm_head.transform.kernel.numpy(),
        pretrainer.masked_lm_head.transform.kernel.numpy(),
    )

    inputs = random_encoder_inputs(8, 16, len(tokenizer.vocab), lengths=[16] * 8)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    labels = np.arange(8) % 2
    outputs = model(inputs, training=True)
    task_loss = float(model.compute_loss(inputs, labels, outputs, training=False))
    loss = float(model.compute_loss(inputs, labels, outputs, training=True)) - task_loss
    # A pretrained-vocab-sized cross-entropy, scaled by
    # the weight: positive, finite, around 0.5 * ln(V).
    assert 0.1 < loss < 0.5 * np.log(len(tokenizer.vocab)) * 3
    # task unchanged
    np.testing.assert_allclose(outputs["logits"], model.task_model(inputs)["logits"], atol=1e-5)


class WatchedKeywordTask(KeywordTask):
    """KeywordTask that keeps the encoder's embedding tables as built and at each evaluation."""

    def build_model(self, encoder):
        model = super().build_model(encoder)
        model.build_with_dummy_inputs()
        self.embeddings = encoder.embeddings
        self.tables = [self._tables()]
        return model

    def _tables(self):
        return {
            "position": self.embeddings.position_embeddings.numpy(),
            "word": self.embeddings.word_embeddings.embeddings.numpy(),
        }

    def evaluate(self, split, encoded, outputs):
        self.tables.append(self._tables())
        return super().evaluate(split, encoded, outputs)


def test_finetuning_with_every_option_learns_and_applies_each(tmp_path):
    options = _options(
        tmp_path, layerwise_lr_decay=0.9, gradual_unfreezing=True, mlm_aux_weight=0.01
    )
    task = WatchedKeywordTask(options, BertTokenizer(options.vocab_file))
    results = run_finetuning(task, options)
    # The majority label gives 0.625. (With mlm_aux_weight=0.1
    # this randomly initialized model stays there.)
    assert results["accuracy"] > 0.9
    built, trained = task.tables[0], task.tables[3]  # as built, and after the third (last) epoch

    # Position rows past max_seq_length get no gradient: only the decoupled weight decay (0.01)
    # shrinks them, at the embeddings' rate. 16 steps an epoch, 48 in all; the embeddings are 3
    # below the top: frozen until step 3 * (16 // 3) = 15, then at 0.9 ** 3 of the learning rate.
    schedule = optimization.warmup_linear_decay(5e-3, 48, 4, decay_from_warmup=True)
    expected = 1 - np.prod([1 - 0.01 * 0.9**3 * float(schedule(t)) for t in range(15, 48)])
    unused = slice(options.max_seq_length, None)
    shrink = 1 - np.linalg.norm(trained["position"][unused]) / np.linalg.norm(
        built["position"][unused]
    )
    assert shrink == pytest.approx(expected, rel=0.01)

    # [MASK] is in no task input: only the masked-LM loss gives its word embedding a gradient,
    # without which weight decay would only rescale it.
    mask_id = task.tokenizer.vocab.mask_id
    before, after = built["word"][mask_id], trained["word"][mask_id]
    assert before @ after / (np.linalg.norm(before) * np.linalg.norm(after)) < 0.995


class CrashAfterFirstEpoch(KeywordTask):
    """KeywordTask whose first evaluation (after epoch 1) fails, as a crash mid-training would."""

    crashed = False

    def evaluate(self, split, encoded, outputs):
        if not CrashAfterFirstEpoch.crashed:
            CrashAfterFirstEpoch.crashed = True
            raise RuntimeError("simulated crash")
        return super().evaluate(split, encoded, outputs)


def test_a_crashed_run_resumes_from_its_last_epoch(tmp_path, capsys):
    options = _options(tmp_path, num_train_epochs=2, train_batch_size=64)
    task = CrashAfterFirstEpoch(options, BertTokenizer(options.vocab_file))
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_finetuning(task, options)
    capsys.readouterr()
    run_finetuning(task, options)
    printed = capsys.readouterr().out
    # one row per example: no windows
    assert "Fine-tuning on 512 examples: 2 epoch(s) of 8 steps" in printed
    # Epoch 1 is not trained again, but its evaluation, which the crash cut short, is run.
    assert "at step 8 of 16 (epoch 2)" in printed
    assert "Epoch 1 eval" in printed and "Epoch 2 eval" in printed
    assert not (tmp_path / "out" / "backup").exists()  # removed once training finished


def test_sparse_cross_entropy_smooths_labels_and_averages_over_weighted_tokens():
    from bert_tf.finetuning.losses import SparseCrossEntropy

    logits = np.array([[2.0, 0.0, -1.0]], "float32")
    log_softmax = logits - np.log(np.exp(logits).sum())
    smoothed = np.array([0.8, 0.1, 0.1])  # 0.3 spread evenly over 3 classes, on top of 0.7 one-hot
    expected = -(smoothed * log_softmax).sum()
    assert float(SparseCrossEntropy(0.3)(np.array([0]), logits)) == pytest.approx(
        expected, rel=1e-5
    )

    tokens = np.array([[[2.0, 0.0, -1.0], [0.0, 5.0, 0.0]]], "float32")  # [1, 2 tokens, 3]
    weighted = SparseCrossEntropy()(
        np.array([[0, 2]]), tokens, sample_weight=np.array([[1.0, 0.0]])
    )
    # the unweighted token is out
    assert float(weighted) == pytest.approx(-log_softmax[0, 0], rel=1e-5)
    assert float(SparseCrossEntropy(scale=0.5)(np.array([0]), logits)) == pytest.approx(
        -0.5 * log_softmax[0, 0], rel=1e-5
    )


@pytest.mark.slow
def test_mirrored_fine_tuning_clips_the_global_batch_like_one_device(tmp_path):
    repo = pathlib.Path(__file__).resolve().parents[1]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(repo), str(repo / "tests")]),
        TF_CPP_MIN_LOG_LEVEL="2",
    )
    worker = subprocess.run(
        [sys.executable, __file__, "global_clipping", str(tmp_path)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert worker.returncode == 0, worker.stderr[-3000:]
    results = json.loads(worker.stdout.strip().splitlines()[-1])
    # A classifier in `MaskedLMAuxiliary`: its loss is Keras's compiled loss, as a bare
    # classifier's, plus the masked-LM term, for which each replica masks its rows as one device
    # masks them and takes the mean over the global batch's predictions.
    np.testing.assert_allclose(results["mirrored"], results["one_device"], rtol=1e-5)
    one, mirrored, initial = (
        np.load(tmp_path / f"{name}.npz") for name in ("one_device", "mirrored", "initial")
    )
    for name in one.files:
        np.testing.assert_allclose(mirrored[name], one[name], atol=1e-5, err_msg=name)
    assert (
        sum(not np.allclose(one[name], initial[name]) for name in one.files) > len(one.files) // 2
    )
    # the driver takes --mlm_aux_weight on 2 replicas
    assert results["mlm_aux_driver_accuracy"] > 0.9
    # Keras's fit fails with several steps per call on 2 mirrored replicas: refused before any work.
    assert results["iterations_per_loop_error"] == (
        "`iterations_per_loop`=2 needs one replica or "
        "a TPU: Keras cannot run several steps per "
        "call under MirroredStrategy with 2 replicas; "
        "leave it at 1"
    )


def _fine_tune_on_two_devices_and_one(workdir: pathlib.Path) -> None:
    """The same steps of a classifier in `MaskedLMAuxiliary`, under MirroredStrategy (2 CPUs) and
    OneDeviceStrategy; then the driver with --mlm_aux_weight on the 2 CPUs, and with
    --iterations_per_loop=2 there.

    The clip norm is tiny, so every step clips: per-replica clipping would differ.
    Writes each run's weights and prints each run's per-epoch loss and the driver's accuracy.
    """
    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    options = _options(
        workdir,
        layerwise_lr_decay=0.9,
        gradual_unfreezing=True,
        mlm_aux_weight=0.01,
        output_dir=str(workdir / "mlm"),
    )
    task = KeywordTask(options, BertTokenizer(options.vocab_file))
    # One MirroredStrategy: a second one in this process would reuse its collective keys.
    strategies = {
        "one_device": tf.distribute.OneDeviceStrategy("/cpu:0"),
        "mirrored": tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
    }
    results = _fit_on_two_devices_and_one(workdir, task.tokenizer.vocab, strategies)
    results["mlm_aux_driver_accuracy"] = run_finetuning(task, options, strategies["mirrored"])[
        "accuracy"
    ]
    try:
        run_finetuning(
            task, dataclasses.replace(options, iterations_per_loop=2), strategies["mirrored"]
        )
    except ValueError as e:
        results["iterations_per_loop_error"] = str(e)
    print(json.dumps(results))


def _fit_on_two_devices_and_one(
    workdir: pathlib.Path, vocab, strategies: dict[str, tf.distribute.Strategy]
) -> dict[str, list[float]]:
    """Fits a classifier in `MaskedLMAuxiliary` from the same weights on each strategy; its losses.
    One encoder layer: tracing the optimizer's per-variable
    updates, on each replica, takes most of the time."""
    inputs = random_encoder_inputs(16, 8, len(vocab))
    dataset = tf.data.Dataset.from_tensor_slices((inputs, {"logits": np.arange(16) % 2})).batch(8)
    initial, losses = None, {}
    for name, strategy in strategies.items():
        with strategy.scope():
            classifier = BertClassifier(
                tiny_encoder(vocab_size=len(vocab), num_hidden_layers=1),
                num_classes=2,
                dropout_rate=0.0,
            )
            model = MaskedLMAuxiliary(classifier, vocab, weight=0.5, seed=1)
            model.build_with_dummy_inputs()
            if initial is None:
                initial = model.get_weights()
            model.set_weights(initial)
            model.clip_norm = 1e-3
            optimizer = optimization.create_finetuning_optimizer(
                1e-2,
                6,
                0,
                layer_depths(classifier.encoder),
                1,
                layerwise_lr_decay=0.8,
                unfreeze_every_steps=1,
            )
            model.compile(
                optimizer=optimizer,
                loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
            )
        history = model.fit(dataset, epochs=3, verbose=0)
        losses[name] = history.history["loss"]
        np.savez(
            workdir / f"{name}.npz", **{f"{i:03d}": w for i, w in enumerate(model.get_weights())}
        )
    np.savez(workdir / "initial.npz", **{f"{i:03d}": w for i, w in enumerate(initial)})
    return losses


if __name__ == "__main__":
    from bert_tf.script import import_out_of_the_collectors_way

    # imported above: this freezes what the imports built
    import_out_of_the_collectors_way("tensorflow")
    mode, workdir = sys.argv[1], pathlib.Path(sys.argv[2])
    if mode == "global_clipping":
        _fine_tune_on_two_devices_and_one(workdir)
