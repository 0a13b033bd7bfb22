"""Multi-task fine-tuning: two GLUE-format tasks and a CoNLL tagging task on one tiny encoder."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import REPO, script_failures, tiny_config, write_tiny_config, write_word_vocab
from bert_tf.finetuning import FineTuningOptions, run_finetuning
from bert_tf.models import BertEncoder
from bert_tf.multitask import runner
from bert_tf.multitask.runner import build_task, run_multitask, train_tasks
from bert_tf.multitask.task_list import TaskSpec, batch_rows, parse_tasks, sampling_probabilities
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tokenization import BertTokenizer

CONLL = REPO / "tests" / "fixtures" / "conll"
POSITIVE, NEGATIVE = ["good", "great"], ["bad", "awful"]
FILLER = ["the", "film", "was", "really", "plot", "story", "a", "it"]


def sentiment_rows(n, seed):
    """SST-2 rows: filler words around one sentiment word; 1 = positive."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = list(rng.choice(FILLER, 3))
        words.insert(rng.integers(0, 4), rng.choice(POSITIVE if i % 2 else NEGATIVE))
        rows.append((" ".join(words), i % 2))
    return rows


def entailment_rows(n, seed):
    """RTE rows: a hypothesis with "no" in it is not entailed."""
    rng = np.random.default_rng(seed)
    return [
        (
            i,
            " ".join(rng.choice(FILLER, 4)),
            " ".join(rng.choice(FILLER, 2)) + (" no" if i % 2 else ""),
            "not_entailment" if i % 2 else "entailment",
        )
        for i in range(n)
    ]


def write_tsv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join("\t".join(map(str, row)) + "\n" for row in [header, *rows]), encoding="utf-8"
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("multitask")
    write_tsv(root / "SST-2" / "train.tsv", ("sentence", "label"), sentiment_rows(96, 0))
    write_tsv(root / "SST-2" / "dev.tsv", ("sentence", "label"), sentiment_rows(32, 1))
    write_tsv(
        root / "RTE" / "train.tsv",
        ("index", "sentence1", "sentence2", "label"),
        entailment_rows(96, 2),
    )
    write_tsv(
        root / "RTE" / "dev.tsv",
        ("index", "sentence1", "sentence2", "label"),
        entailment_rows(32, 3),
    )
    texts = [
        (CONLL / "train.txt").read_text(),
        (CONLL / "dev.txt").read_text(),
        " ".join(POSITIVE + NEGATIVE + FILLER + ["no"]),
    ]
    vocab = write_word_vocab(root / "vocab.txt", texts)
    config = write_tiny_config(
        root, vocab_size=len(open(vocab).read().split()), max_position_embeddings=32
    )
    return root, vocab, config


def options_for(root, vocab, config, out, **overrides):
    settings = dict(
        do_train=True,
        do_eval=True,
        max_seq_length=24,
        train_batch_size=16,
        eval_batch_size=64,
        learning_rate=5e-3,
        num_train_epochs=4,
        verbose=0,
    )
    return FineTuningOptions(
        data_dir=None,
        vocab_file=vocab,
        output_dir=str(out),
        bert_config_file=config,
        **{**settings, **overrides},
    )


def test_three_tasks_train_evaluate_export_and_start_single_task_fine_tuning(data, tmp_path):
    root, vocab, config = data
    specs = parse_tasks(
        f"SST-2:classifier:{root / 'SST-2'},RTE:classifier:{root / 'RTE'},conll:ner:{CONLL}"
    )
    options = options_for(
        root, vocab, config, tmp_path / "out", export_dir=str(tmp_path / "export")
    )
    tokenizer = BertTokenizer(vocab)
    results = run_multitask(specs, options, tokenizer, "temperature", 2.0)
    assert results["SST-2"]["accuracy"] >= 0.85, results  # chance 0.5
    assert results["RTE"]["accuracy"] >= 0.85, results  # chance 0.5
    assert results["conll"]["f1"] >= 0.5, results  # the majority tag O scores entity F1 0
    for name, metric in (("SST-2", "accuracy"), ("RTE", "accuracy"), ("conll", "f1")):
        written = dict(
            line.split(" = ")
            for line in (tmp_path / "out" / name / "eval_results.txt").read_text().splitlines()
        )
        assert float(written[metric]) == pytest.approx(results[name][metric])
        assert (tmp_path / "export" / name / "saved_model.pb").exists()
    assert not (tmp_path / "out" / "backup").exists()  # removed once the outputs are written

    # run_classifier.py's task, started from the multi-task
    # best checkpoint: the encoder and its head load.
    single = dataclasses.replace(
        options,
        data_dir=str(root / "SST-2"),
        output_dir=str(tmp_path / "single"),
        init_checkpoint=str(tmp_path / "out" / "SST-2" / "best"),
        do_train=False,
        bert_config_file=None,
        export_dir=None,
    )
    scored = run_finetuning(SentencePredictionTask(single, tokenizer, "SST-2"), single)
    assert scored["accuracy"] == pytest.approx(results["SST-2"]["accuracy"])


def test_a_task_of_weight_0_is_never_trained(data, tmp_path):
    root, vocab, config = data
    specs = [
        TaskSpec("SST-2", "classifier", str(root / "SST-2")),
        TaskSpec("RTE", "classifier", str(root / "RTE"), 0.0),
    ]
    options = options_for(root, vocab, config, tmp_path / "out", num_train_epochs=1, do_eval=False)
    tokenizer = BertTokenizer(vocab)
    tasks = {spec.name: build_task(spec, options, tokenizer) for spec in specs}
    encoder = BertEncoder.from_bert_config(tiny_config(vocab_size=len(tokenizer.vocab)))
    models = {name: task.build_model(encoder) for name, task in tasks.items()}
    for model in models.values():
        model.build_with_dummy_inputs()
    before = {name: [w.numpy() for w in model.classifier.weights] for name, model in models.items()}
    encoder_before = encoder.pooler.kernel.numpy()
    train = {name: task.encode("train") for name, task in tasks.items()}
    train_tasks(specs, tasks, models, train, {}, options, "uniform", 1.0)
    for old, new in zip(before["RTE"], models["RTE"].classifier.weights, strict=True):
        np.testing.assert_array_equal(old, new.numpy())
    assert not np.array_equal(before["SST-2"][0], models["SST-2"].classifier.weights[0].numpy())
    assert not np.array_equal(encoder_before, encoder.pooler.kernel.numpy())


def test_sampling_probabilities():
    sizes, weights = [100, 25, 400], [1.0, 1.0, 0.0]
    np.testing.assert_allclose(
        sampling_probabilities(sizes, weights, "proportional"), [0.8, 0.2, 0.0]
    )
    np.testing.assert_allclose(sampling_probabilities(sizes, weights, "uniform"), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(
        sampling_probabilities(sizes, weights, "temperature", 2.0), [10 / 15, 5 / 15, 0.0]
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "`tasks` is required"),
        ("a:classifier", "is not name:kind:data_dir"),
        ("a:regression:d", "kind 'regression' is not one of"),
        ("a:ner:d:-1", "the weight must be a number >= 0"),
        ("a:ner:d,a:ner:e", "each task needs its own name"),
        ("a:ner:d:0", "every weight is 0"),
    ],
)
def test_a_bad_task_list_is_one_line_naming_the_flag(text, message):
    with pytest.raises(ValueError, match=message):
        parse_tasks(text)


def checkpoint_values(prefix):
    reader = tf.train.load_checkpoint(str(prefix))
    return {
        name: reader.get_tensor(name)
        for name in reader.get_variable_to_shape_map()
        if "/.ATTRIBUTES/" in name
    }


def test_a_killed_run_resumes_to_the_weights_of_an_uninterrupted_one(data, tmp_path, monkeypatch):
    root, vocab, config = data
    specs = parse_tasks(f"SST-2:classifier:{root / 'SST-2'},RTE:classifier:{root / 'RTE'}")
    tokenizer = BertTokenizer(vocab)

    def run(out):
        options = options_for(
            root, vocab, config, out, num_train_epochs=1, do_eval=False, save_checkpoints_steps=5
        )
        run_multitask(specs, options, tokenizer)
        return [checkpoint_values(out / name / "best" / "ckpt") for name in ("SST-2", "RTE")]

    whole = run(tmp_path / "whole")
    batches = []

    def killed_after_8_steps(*args):  # a kill after step 8; the backup holds step 5
        batches.append(args)
        if len(batches) > 8:
            raise KeyboardInterrupt
        return batch_rows(*args)

    monkeypatch.setattr(runner, "batch_rows", killed_after_8_steps)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "resumed")
    assert (tmp_path / "resumed" / "backup").exists()
    monkeypatch.setattr(runner, "batch_rows", batch_rows)
    for ours, theirs in zip(run(tmp_path / "resumed"), whole, strict=True):
        assert ours.keys() == theirs.keys()
        for name in theirs:
            np.testing.assert_allclose(ours[name], theirs[name], atol=1e-6, err_msg=name)


def test_bad_flags_and_data_are_one_line_errors_that_write_nothing(data, tmp_path):
    root, vocab, config = data
    model = [
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={tmp_path / 'out'}",
        "--do_train",
        "--max_seq_length=16",
    ]
    cases = [
        (
            [f"--tasks=SST-2:classifier:{root / 'SST-2'}", f"--data_dir={root}", *model],
            "--data_dir is not supported by run_multitask.py: "
            "each task names its data directory in --tasks",
        ),
        (
            ["--tasks=SST-2:classify:x", *model],
            "--tasks: 'SST-2:classify:x': kind 'classify' is "
            "not one of classifier, ner, squad, multiple_choice",
        ),
        (
            [f"--tasks=SST-2:classifier:{root / 'SST-2'},conll:ner:{tmp_path}", *model],
            f"{tmp_path}/train.txt: no such file",
        ),
    ]
    assert script_failures("run_multitask.py", *(argv for argv, _ in cases)) == [
        (1, f"run_multitask.py: error: {message}") for _, message in cases
    ]
    assert not (tmp_path / "out").exists()
