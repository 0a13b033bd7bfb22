"""BERT's Table 5 at small scale: pretraining with and without next-sentence prediction, then
fine-tuning on a sentence-pair task.

    python benchmarks/bench_nsp_ablation.py                    # about 10 minutes on 2 cores
    python benchmarks/bench_nsp_ablation.py --pretrain_steps=200 --seeds=1   # a quick look

Both models are the tiny config, trained from the same initialisation for the same steps on
the same batch size and sequence length (32 tokens: at longer ones alone the tiny model stays
on the unigram plateau for longer than this budget, docs/design-notes.md), on the Wikipedia
sample less every fifth article:
one on google-research/bert's sentence pairs with next-sentence prediction, one on
contiguous full-length text with the masked LM alone (`--next_sentence_prediction=false`,
RoBERTa's FULL-SENTENCES). Each is then fine-tuned, from each of `--seeds` seeds, on a
sentence-pair task built from the held-out articles (the GLUE fixtures have a few lines
only): are two sentences from the same article? Half the pairs are, half are not; each
sentence of a pair is drawn from an article in proportion to its sentences either way, and
the articles of the training pairs and of the dev pairs are disjoint. The script prints
each dev accuracy, the two means, their difference and the spread over the seeds.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from bert_tf.corpora import fetch_uncased_vocab, fetch_wikipedia_sample  # noqa: E402
from bert_tf.data.pretraining_data_generator import (
    PretrainingDataOptions,  # noqa: E402
    create_pretraining_data,
)
from bert_tf.finetuning.driver import run_finetuning  # noqa: E402
from bert_tf.finetuning.options import FineTuningOptions  # noqa: E402
from bert_tf.pretraining import demo  # noqa: E402
from bert_tf.pretraining.driver import PretrainingOptions, run_pretraining  # noqa: E402
from bert_tf.tasks.sentence_prediction import SentencePredictionTask  # noqa: E402
from bert_tf.tokenization import BertTokenizer  # noqa: E402

flags.DEFINE_integer("pretrain_steps", 1000, "Pretraining steps of each model.")
flags.DEFINE_integer("seeds", 2, "Fine-tuning seeds per model.")
flags.DEFINE_integer("max_seq_length", 32, "Sequence length of pretraining and fine-tuning.")
flags.DEFINE_integer("train_pairs", 4000, "Sentence pairs to fine-tune on.")
flags.DEFINE_integer("dev_pairs", 1000, "Sentence pairs to evaluate on.")
flags.DEFINE_float("num_train_epochs", 3.0, "Fine-tuning epochs.")
flags.DEFINE_string(
    "work_dir",
    None,
    "Where the data and checkpoints go and stay (default: a "
    "temporary directory, removed at the end).",
)
FLAGS = flags.FLAGS

HELD_OUT_EVERY = 5  # every fifth article is held out for the pair task
DEV_ARTICLES = 8  # the last held-out articles: the dev pairs' (the others: the training pairs')


def split_corpus(corpus: pathlib.Path, out_dir: pathlib.Path) -> tuple[pathlib.Path, list[str]]:
    """(the pretraining corpus file, the held-out articles)."""
    articles = corpus.read_text(encoding="utf-8").strip().split("\n\n")
    held_out = articles[HELD_OUT_EVERY - 1 :: HELD_OUT_EVERY]
    kept = [a for i, a in enumerate(articles) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "train.txt"
    path.write_text("\n\n".join(kept) + "\n", encoding="utf-8")
    return path, held_out


def sentences_by_article(articles: list[str]) -> list[list[str]]:
    """The articles' sentences of 6 to 40 words, by article."""
    return [[s for s in a.splitlines() if 6 <= len(s.split()) <= 40] for a in articles]


def same_article_pairs(
    articles: list[list[str]], count: int, rng: np.random.Generator
) -> list[tuple]:
    """`count` (label, sentence, sentence): 1 for two sentences of one article, 0 for two
    articles'."""
    articles = [a for a in articles if len(a) >= 2]
    weights = np.array([len(a) for a in articles], float)
    pairs = []
    for i in range(count):
        first = rng.choice(len(articles), p=weights / weights.sum())
        if i % 2:
            a, b = rng.choice(len(articles[first]), 2, replace=False)
            pairs.append((1, articles[first][a], articles[first][b]))
        else:
            others = weights.copy()
            others[first] = 0
            second = rng.choice(len(articles), p=others / others.sum())
            pairs.append((0, rng.choice(articles[first]), rng.choice(articles[second])))
    return pairs


def write_task(held_out: list[str], task_dir: pathlib.Path) -> None:
    """The pair task in GLUE's MRPC layout: train.tsv and dev.tsv."""
    articles = sentences_by_article(held_out)
    rng = np.random.default_rng(0)
    splits = {
        "train": (articles[:-DEV_ARTICLES], FLAGS.train_pairs),
        "dev": (articles[-DEV_ARTICLES:], FLAGS.dev_pairs),
    }
    task_dir.mkdir(parents=True, exist_ok=True)
    for split, (split_articles, count) in splits.items():
        rows = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        for k, (label, a, b) in enumerate(same_article_pairs(split_articles, count, rng)):
            rows.append(f"{label}\t{2 * k}\t{2 * k + 1}\t{a}\t{b}")
        (task_dir / f"{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def pretrain(
    options: PretrainingOptions,
    train_text: pathlib.Path,
    vocab_file: str,
    next_sentence_prediction: bool,
) -> tuple[str, dict, float]:
    """Writes the records of one mode and pretrains on them: (output_dir, last metrics, seconds)."""
    name = "nsp" if next_sentence_prediction else "no_nsp"
    records = pathlib.Path(options.output_dir) / f"{name}.tfrecord"
    data_options = PretrainingDataOptions(
        vocab_file=vocab_file,
        max_seq_length=options.max_seq_length,
        max_predictions_per_seq=options.max_predictions_per_seq,
        dupe_factor=demo.DUPE_FACTOR,
        next_sentence_prediction=next_sentence_prediction,
    )
    stats = create_pretraining_data(
        [str(train_text)],
        [str(records)],
        data_options,
        num_workers=os.cpu_count() or 1,
        progress=False,
    )
    print(
        f"{name}: {stats.examples:,} examples, mean real length "
        f"{stats.real_tokens / stats.examples:.1f} tokens",
        flush=True,
    )
    run = dataclasses.replace(
        options,
        input_file=str(records),
        output_dir=os.path.join(options.output_dir, name),
        next_sentence_prediction=next_sentence_prediction,
    )
    start = time.perf_counter()
    results = run_pretraining(run, tf.distribute.get_strategy())
    return run.output_dir, results, time.perf_counter() - start


def fine_tune(
    checkpoint: str, task_dir: pathlib.Path, vocab_file: str, output_dir: str, seed: int
) -> float:
    """Dev accuracy of the pair task, fine-tuned from `checkpoint` with `seed`."""
    options = FineTuningOptions(
        data_dir=str(task_dir),
        vocab_file=vocab_file,
        output_dir=output_dir,
        init_checkpoint=checkpoint,
        do_train=True,
        do_eval=True,
        max_seq_length=FLAGS.max_seq_length,
        train_batch_size=32,
        eval_batch_size=64,
        learning_rate=1e-4,
        num_train_epochs=FLAGS.num_train_epochs,
        random_seed=seed,
        verbose=0,
    )
    task = SentencePredictionTask(options, BertTokenizer(vocab_file), "MRPC")
    return run_finetuning(task, options)["accuracy"]


def compare(work_dir: str) -> None:
    started = time.perf_counter()
    seq = FLAGS.max_seq_length
    options = PretrainingOptions(
        input_file="",
        **{
            **demo.DEMO_SETTINGS,
            "output_dir": work_dir,
            "max_seq_length": seq,
            "max_predictions_per_seq": max(1, round(seq * 0.15)),
            "train_batch_size": 4096 // seq,
            "num_train_steps": FLAGS.pretrain_steps,
            "num_warmup_steps": FLAGS.pretrain_steps // 10,
            "save_checkpoints_steps": FLAGS.pretrain_steps,
            "do_eval": False,
            "verbose": False,
        },
    )
    data_dir = pathlib.Path(work_dir) / "data"
    train_text, held_out = split_corpus(fetch_wikipedia_sample(), data_dir)
    vocab_file = str(fetch_uncased_vocab())
    task_dir = data_dir / "same_article"
    write_task(held_out, task_dir)

    accuracies = {}
    for next_sentence_prediction in (True, False):
        label = "with NSP" if next_sentence_prediction else "without NSP"
        checkpoint, results, seconds = pretrain(
            options, train_text, vocab_file, next_sentence_prediction
        )
        shown = ", ".join(f"{k} {v:.3f}" for k, v in results.items() if k != "examples_per_second")
        print(
            f"{label}: pretrained {FLAGS.pretrain_steps} steps in {seconds:.0f} s ({shown})",
            flush=True,
        )
        accuracies[label] = [
            fine_tune(
                checkpoint,
                task_dir,
                vocab_file,
                os.path.join(work_dir, f"fine_tuned_{next_sentence_prediction}_{seed}"),
                seed,
            )
            for seed in range(FLAGS.seeds)
        ]
        by_seed = [round(a, 4) for a in accuracies[label]]
        print(f"{label}: dev accuracy by seed {by_seed}", flush=True)

    with_nsp, without = (np.array(accuracies[k]) for k in ("with NSP", "without NSP"))
    print(
        f"\nmachine: {os.cpu_count()} CPUs; tiny config, {FLAGS.pretrain_steps} pretraining "
        f"steps of batch {options.train_batch_size} x {seq} tokens; same-article pair task, "
        f"{FLAGS.train_pairs} training and {FLAGS.dev_pairs} dev pairs, {FLAGS.seeds} seeds; "
        f"{time.perf_counter() - started:.0f} s in all"
    )
    print("| pretraining | dev accuracy, mean | min to max over seeds |")
    print("| --- | --- | --- |")
    for name, values in (("with NSP", with_nsp), ("without NSP", without)):
        print(f"| {name} | {values.mean():.4f} | {values.min():.4f} to {values.max():.4f} |")
    print(
        f"without NSP - with NSP: {without.mean() - with_nsp.mean():+.4f} "
        f"(seed spread: {np.ptp(with_nsp):.4f} with, {np.ptp(without):.4f} without)"
    )


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)
    if FLAGS.work_dir:
        compare(FLAGS.work_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_nsp_ablation_") as work_dir:
            compare(work_dir)


if __name__ == "__main__":
    app.run(main)
