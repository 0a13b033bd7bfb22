"""Pretraining-data generation: Model Garden's `create_pretraining_data` against ours.

Both run as whole commands (start-up included) on the same corpus, the public
Wikipedia sample repeated to at least 25 MB, with the same flags
(max_seq_length 128, max_predictions_per_seq 20, dupe_factor 5, the real
uncased vocab). Ours runs before and after Model Garden (the machine's speed
drifts); its figure is the mean. The script prints examples/s, the ratio and
peak RSS, then compares the statistics of the two outputs and fails if one is
out of range or the ratio is below --min_ratio.

With `--language=zh` the corpus is the public Chinese news sample (its first
`--corpus_mb`, whole articles) with bert-base-chinese's vocab, and ours also runs
with whole-word masking of rjieba's words (Model Garden has no Chinese word
masking, so it runs without); each of ours must reach --min_ratio.

  python benchmarks/bench_pretraining_data.py
  python benchmarks/bench_pretraining_data.py --language=zh --corpus_mb=8 --min_ratio=10
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import psutil
import tensorflow as tf

from bert_tf.corpora import (
    fetch_chinese_news,
    fetch_chinese_vocab,
    fetch_uncased_vocab,
    fetch_wikipedia_sample,
)
from bert_tf.data import pretraining_features
from bert_tf.tokenization import Vocab

REPO = pathlib.Path(__file__).resolve().parents[1]
FLAGS = [
    "--max_seq_length=128",
    "--max_predictions_per_seq=20",
    "--dupe_factor=5",
    "--masked_lm_prob=0.15",
    "--short_seq_prob=0.1",
    "--random_seed=12345",
    "--do_lower_case=True",
]
# Allowed differences between the two outputs (the issue's).
TOLERANCES = {
    "masked_fraction": 0.01,
    "random_next_fraction": 0.02,
    "mask_share": 0.02,
    "random_share": 0.02,
    "keep_share": 0.02,
}
MEAN_LENGTH_RELATIVE_TOLERANCE = 0.05


def run_command(command: list[str]) -> tuple[float, int]:
    """Runs `command`; returns (wall seconds, peak RSS in bytes of its whole process tree)."""
    start = time.perf_counter()
    process = psutil.Popen(
        command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.wait(0.1):
            try:
                tree = [process] + process.children(recursive=True)
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    if process.returncode:
        sys.exit(f"{' '.join(command[:3])} failed:\n{stderr[-3000:]}")
    return seconds, peak


def output_statistics(path: str, mask_id: int) -> dict[str, float]:
    """Statistics of a pretraining TFRecord file, decoded with the schema module."""
    dataset = (
        tf.data.TFRecordDataset(path)
        .batch(8192)
        .map(lambda s: pretraining_features.parse_examples(s, 128, 20))
    )
    totals = dict(examples=0, real=0, predicted=0, mask=0, keep=0, random_next=0)
    for batch in dataset.as_numpy_iterator():
        weights = batch["masked_lm_weights"] > 0
        at_positions = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], axis=1)
        totals["examples"] += len(weights)
        totals["real"] += int(batch["input_mask"].sum())
        totals["predicted"] += int(weights.sum())
        totals["mask"] += int((weights & (at_positions == mask_id)).sum())
        totals["keep"] += int((weights & (at_positions == batch["masked_lm_ids"])).sum())
        totals["random_next"] += int(batch["next_sentence_labels"].sum())
    predicted = totals["predicted"]
    return {
        "examples": totals["examples"],
        "mean_real_length": totals["real"] / totals["examples"],
        "masked_fraction": predicted / totals["real"],
        "random_next_fraction": totals["random_next"] / totals["examples"],
        "mask_share": totals["mask"] / predicted,
        "keep_share": totals["keep"] / predicted,
        "random_share": (predicted - totals["mask"] - totals["keep"]) / predicted,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus_mb", type=float, default=25.0, help="corpus size, at least")
    parser.add_argument("--num_workers", type=int, default=os.cpu_count())
    parser.add_argument("--min_ratio", type=float, default=20.0)
    parser.add_argument("--language", choices=["en", "zh"], default="en")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        corpus = pathlib.Path(tmp, "corpus.txt")
        if args.language == "en":
            vocab_file = fetch_uncased_vocab()
            text = fetch_wikipedia_sample().read_text(encoding="utf-8").rstrip("\n") + "\n\n"
            copies = int(np.ceil(args.corpus_mb * 2**20 / len(text.encode())))
            corpus.write_text(text * copies, encoding="utf-8")
            described = f"{copies} copies of the Wikipedia sample"
        else:
            vocab_file = fetch_chinese_vocab()
            articles = fetch_chinese_news().read_text(encoding="utf-8").split("\n\n")
            sizes = np.cumsum([len(a.encode()) + 2 for a in articles])
            kept = articles[: max(1, int(np.searchsorted(sizes, args.corpus_mb * 2**20)))]
            corpus.write_text("\n\n".join(kept).rstrip("\n") + "\n", encoding="utf-8")
            described = f"{len(kept):,} Chinese news articles"
        mask_id = Vocab.from_file(vocab_file).mask_id
        common = [f"--input_file={corpus}", f"--vocab_file={vocab_file}", *FLAGS]
        commands = {
            "model_garden": [
                sys.executable,
                "-m",
                "official.nlp.data.create_pretraining_data",
                f"--output_file={tmp}/model_garden.tfrecord",
                *common,
            ]
        }
        variants = {"bert_tf": []}
        if args.language == "zh":
            variants["bert_tf wwm"] = ["--do_whole_word_mask", "--word_segmenter=rjieba"]
        for name, extra in variants.items():
            commands[name] = [
                sys.executable,
                "create_pretraining_data.py",
                f"--output_file={tmp}/{name}.tfrecord",
                f"--num_workers={args.num_workers}",
                *common,
                *extra,
            ]
        print(
            f"corpus: {described}, {corpus.stat().st_size / 2**20:.1f} MB; {os.cpu_count()} cores;"
            f" flags {' '.join(FLAGS)}; bert_tf wwm adds "
            f"{' '.join(variants.get('bert_tf wwm', []))}",
            flush=True,
        )
        runs = {name: [] for name in commands}
        for name in [*variants, "model_garden", *variants]:
            runs[name].append(run_command(commands[name]))
            print(f"  {name}: {runs[name][-1][0]:.1f} s", flush=True)
        stats = {name: output_statistics(f"{tmp}/{name}.tfrecord", mask_id) for name in commands}

    speed = {}
    print(f"\n{'':14}{'examples':>10}{'seconds':>9}{'examples/s':>12}{'peak RSS':>10}{'ratio':>8}")
    for name in commands:
        seconds = float(np.mean([s for s, _ in runs[name]]))
        speed[name] = stats[name]["examples"] / seconds
        peak = max(p for _, p in runs[name]) / 2**20
        print(
            f"{name:14}{stats[name]['examples']:>10,}{seconds:>9.1f}"
            f"{speed[name]:>12,.0f}{peak:>8,.0f} MB{speed[name] / speed['model_garden']:>7.1f}x"
        )
    ratios = {name: speed[name] / speed["model_garden"] for name in variants}
    print(f"target: each ratio >= {args.min_ratio:g}x\n")

    failures = []
    if "bert_tf wwm" in stats:
        print("bert_tf wwm: " + ", ".join(f"{k} {v:.4f}" for k, v in stats["bert_tf wwm"].items()))
    print(f"{'statistic':22}{'model_garden':>14}{'bert_tf':>10}{'allowed':>10}")
    for key in ("mean_real_length", *TOLERANCES):
        peer_value, our_value = stats["model_garden"][key], stats["bert_tf"][key]
        allowed = TOLERANCES.get(key, MEAN_LENGTH_RELATIVE_TOLERANCE * peer_value)
        ok = abs(our_value - peer_value) <= allowed
        failures += [] if ok else [key]
        print(
            f"{key:22}{peer_value:>14.4f}{our_value:>10.4f}{'±' + format(allowed, '.3f'):>10}"
            f"{'' if ok else '  OUT OF RANGE'}"
        )
    failures += [
        f"{name} ratio {ratio:.1f} < {args.min_ratio:g}"
        for name, ratio in ratios.items()
        if ratio < args.min_ratio
    ]
    if failures:
        sys.exit(f"FAILED: {', '.join(failures)}")
    print("all statistics in range")


if __name__ == "__main__":
    main()
