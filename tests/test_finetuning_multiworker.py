"""Fine-tuning under MultiWorkerMirroredStrategy: two local worker processes with a real TF_CONFIG.

Each worker is given its own --output_dir (and --export_dir): the chief's must hold the run,
the other's must not exist, and both workers must end with the same weights. This file is
also the worker script of those processes.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from worker_processes import REPO, finish, tf_configs, worker_env

CLASSIFIER_ROWS, BATCH, SEQ = 64, 16, 12


def _workers(mode: str, workdir: pathlib.Path, *extra: str) -> list[str]:
    """Runs this file as `mode` in two worker processes of one cluster; returns their stdouts."""
    processes = [
        subprocess.Popen(
            [sys.executable, __file__, mode, str(workdir), tf_config, *extra],
            cwd=REPO,
            env=worker_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tf_config in tf_configs(2)
    ]
    return finish(*processes)


def _assert_same_weights(first: pathlib.Path, second: pathlib.Path) -> None:
    first, second = np.load(first), np.load(second)
    assert first.files == second.files and first.files
    for name in first.files:
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)


def _tree(directory: pathlib.Path) -> list[str]:
    """The files under `directory`, relative to it; the event files as their directories."""
    return sorted(
        {
            str(p.parent.relative_to(directory)) + "/"
            if p.name.startswith("events.")
            else str(p.relative_to(directory))
            for p in directory.rglob("*")
            if p.is_file()
        }
    )


# -- tests ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_classifier_trains_on_two_workers_and_only_the_chief_writes(tmp_path):
    from test_run_classifier import (
        FILLER,
        NEGATIVE,
        POSITIVE,
        model_files,
        sentiment_examples,
        write_tsv,
    )

    data = tmp_path / "data"
    data.mkdir()
    for split, rows, seed in (("train", CLASSIFIER_ROWS, 0), ("dev", 24, 1)):
        write_tsv(data / f"{split}.tsv", [("text", "label"), *sentiment_examples(rows, seed)])
    # Test rows of 1 to 10 words: each has probabilities of its own, so their order shows.
    write_tsv(
        data / "test.tsv",
        [("text", "label"), *((" ".join((POSITIVE + FILLER)[:n]), 1) for n in range(1, 11))],
    )
    vocab, config = model_files(tmp_path, POSITIVE + NEGATIVE + FILLER)
    outputs = _workers(
        "classifier",
        tmp_path,
        "--task_name=tsv",
        f"--data_dir={data}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        f"--max_seq_length={SEQ}",
        f"--train_batch_size={BATCH}",
        "--eval_batch_size=8",
        "--predict_batch_size=4",
        "--learning_rate=5e-3",
        "--num_train_epochs=2",
    )

    chief, other = tmp_path / "out0", tmp_path / "out1"
    # the backup is removed once the outputs are
    assert _tree(chief) == [
        "best/bert_config.json",
        "best/ckpt.data-00000-of-00001",
        "best/ckpt.index",
        "best/labels.json",
        "best/metrics.json",
        "eval_results.txt",
        "logs/eval/",
        "logs/train/",
        "test_results.tsv",
    ]
    assert (tmp_path / "export0" / "saved_model.pb").exists()
    assert not other.exists() and not (tmp_path / "export1").exists()
    _assert_same_weights(tmp_path / "weights0.npz", tmp_path / "weights1.npz")
    # Both evaluated every example (2 global batches
    # of 8 and one of the rest) with the same weights.
    for out in outputs:
        assert "Fine-tuning on 64 examples: 2 epoch(s) of 4 steps, batch 16" in out
        assert out.count(" eval: accuracy ") == 2
    assert (
        outputs[0].split("Eval results: ")[1].splitlines()[0]
        == outputs[1].split("Eval results: ")[1].splitlines()[0]
    )
    # The predictions each worker gathered from both are
    # in the rows' order: those of the weights alone.
    rows = [row.split("\t") for row in (chief / "test_results.tsv").read_text().splitlines()[1:]]
    assert [row[0] for row in rows] == [str(i) for i in range(10)]
    logits = np.load(tmp_path / "logits0.npy")
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    # the rows' probabilities differ: rows out of order would show
    assert np.ptp(probabilities[:, 0]) > 1e-4
    np.testing.assert_allclose(
        [[float(p) for p in row[2:]] for row in rows], probabilities, atol=1e-6
    )


@pytest.mark.slow
def test_ner_squad_and_multiple_choice_train_on_two_workers(tmp_path):
    outputs = _workers("tasks", tmp_path)
    chief, other = [json.loads(out.strip().splitlines()[-1]) for out in outputs]
    assert {task: chief[task] for task in TASKS} == {
        "ner": ["test_predictions.txt"],
        "squad": ["nbest_predictions.json", "predictions.json"],
        "multiple_choice": ["test_predictions.csv"],
    }
    # no --output_dir at all
    assert {task: other[task] for task in TASKS} == {task: None for task in TASKS}
    # Workers that would resume from different steps (each
    # saw another directory) are refused, on every worker.
    for index, errors in enumerate([chief["errors"], other["errors"]]):
        assert errors == [
            None,
            f"out: this worker resumes from step {index}, but not every worker does; every "
            "worker must read the chief's output directory at that path (a shared one, such as gs://)",
        ]
    for task in TASKS:
        assert (tmp_path / f"{task}0" / "best" / "ckpt.index").exists()
        _assert_same_weights(tmp_path / f"{task}_weights0.npz", tmp_path / f"{task}_weights1.npz")


# -- worker processes ---------------------------------------------------------------------------


def _weights(model) -> dict:
    # Keyed by position: the order of `model.weights` is the same in every build.
    return {f"{i:03d}": v.numpy() for i, v in enumerate(model.weights)}


def _keeping(task, kept: dict):
    """`task`, keeping itself and its task model in `kept` ("task", "model"); returns `task`."""
    build_model = task.build_model

    def build(encoder):
        kept["model"] = build_model(encoder)
        return kept["model"]

    kept["task"], task.build_model = task, build
    return task


def _classifier(workdir: pathlib.Path, index: int, argv: list[str]):
    """run_classifier.py's flags and main, into --output_dir out<index>
    and --export_dir export<index>; saves the task model's final weights,
    and its logits on the test split, computed in this worker alone."""
    from absl import flags

    from bert_tf.finetuning.cli import finetuning_main
    from bert_tf.finetuning.flags import define_finetuning_flags
    from bert_tf.tasks.cli import build_classifier_task
    from bert_tf.tasks.flags import define_classifier_flags

    define_finetuning_flags()
    define_classifier_flags()
    flags.FLAGS(
        [
            "run_classifier.py",
            *argv,
            "--distribution_strategy=multi_worker_mirrored",
            f"--output_dir={workdir / f'out{index}'}",
            f"--export_dir={workdir / f'export{index}'}",
        ]
    )
    kept = {}
    finetuning_main(lambda *args: _keeping(build_classifier_task(*args), kept))(
        ["run_classifier.py"]
    )
    np.savez(workdir / f"weights{index}.npz", **_weights(kept["model"]))
    np.save(
        workdir / f"logits{index}.npy",
        kept["model"](kept["task"].encode("test").features)["logits"],
    )


TASKS = ("ner", "squad", "multiple_choice")


def _tasks(workdir: pathlib.Path, index: int):
    """Fine-tunes and predicts each of TASKS in turn, one short epoch each, into --output_dir
    <task><index>; saves each task model's final weights; prints the files of each --output_dir
    (None: there is none), and the errors of `check_same_resume_step` for a step every worker has
    and for one each has its own."""
    from bert_tf.finetuning.driver import run_finetuning
    from bert_tf.training import distribution

    strategy = distribution.create_strategy("multi_worker_mirrored")
    results = {}
    for name in TASKS:
        kept = {}
        task, options = _task(name, workdir / f"data{index}", workdir / f"{name}{index}")
        run_finetuning(_keeping(task, kept), options, strategy)
        np.savez(workdir / f"{name}_weights{index}.npz", **_weights(kept["model"]))
        output_dir = pathlib.Path(options.output_dir)
        results[name] = (
            sorted(p.name for p in output_dir.iterdir() if p.is_file())
            if output_dir.exists()
            else None
        )
    results["errors"] = [_resume_step_error(strategy, 7), _resume_step_error(strategy, index)]
    print(json.dumps(results))


def _resume_step_error(strategy, step: int) -> str | None:
    from bert_tf.errors import UserInputError
    from bert_tf.training import workers

    try:
        workers.check_same_resume_step(strategy, step, "out")
    except UserInputError as e:
        return str(e)
    return None


def _task(name: str, data: pathlib.Path, output_dir: pathlib.Path):
    """(task, options) of a tiny run of `name`, its data written into `data`."""
    from bert_test_utils import write_tiny_config, write_word_vocab
    from bert_tf.finetuning.options import FineTuningOptions
    from bert_tf.tasks.multiple_choice import MultipleChoiceTask
    from bert_tf.tasks.question_answering import SquadTask
    from bert_tf.tasks.tagging import TaggingTask
    from bert_tf.tokenization import BertTokenizer

    directory = data / name
    directory.mkdir(parents=True)
    if name == "ner":  # the CoNLL fixture's first sentences
        sentences = (REPO / "tests/fixtures/conll/train.txt").read_text().split("\n\n")
        for split, part in (("train", sentences[:32]), ("test", sentences[32:40])):
            (directory / f"{split}.txt").write_text("\n\n".join(part) + "\n")
        texts = [(directory / f"{split}.txt").read_text() for split in ("train", "test")]
    elif name == "squad":
        texts = [(REPO / "tests/fixtures/squad/train-v1.1.json").read_text()]
    else:
        from test_run_multiple_choice import swag_rows, write_csv

        write_csv(directory / "train.csv", swag_rows(32, seed=1))
        write_csv(directory / "test.csv", swag_rows(8, seed=3, labelled=False), labelled=False)
        texts = [(directory / f"{split}.csv").read_text() for split in ("train", "test")]
    vocab = write_word_vocab(directory / "vocab.txt", texts)
    config = write_tiny_config(
        directory, vocab_size=len(pathlib.Path(vocab).read_text().splitlines())
    )
    options = FineTuningOptions(
        data_dir=str(directory),
        vocab_file=vocab,
        output_dir=str(output_dir),
        bert_config_file=config,
        do_train=True,
        do_predict=True,
        max_seq_length=24 if name != "squad" else 64,
        train_batch_size=BATCH,
        predict_batch_size=4,
        learning_rate=1e-3,
        num_train_epochs=1,
        verbose=0,
    )
    tokenizer = BertTokenizer(vocab)
    if name == "ner":
        return TaggingTask(options, tokenizer), options
    if name == "squad":
        squad = str(REPO / "tests/fixtures/squad/train-v1.1.json")
        return SquadTask(
            options,
            tokenizer,
            train_file=squad,
            predict_file=squad,
            doc_stride=16,
            max_query_length=16,
        ), options
    return MultipleChoiceTask(options, tokenizer), options


if __name__ == "__main__":
    from bert_tf.script import import_out_of_the_collectors_way

    mode, workdir, tf_config, *rest = sys.argv[1:]
    os.environ["TF_CONFIG"] = tf_config
    import_out_of_the_collectors_way("tensorflow")
    index = json.loads(tf_config)["task"]["index"]
    if mode == "classifier":
        _classifier(pathlib.Path(workdir), index, rest)
    elif mode == "tasks":
        _tasks(pathlib.Path(workdir), index)
