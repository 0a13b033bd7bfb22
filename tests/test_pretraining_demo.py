"""The embedded demo (`python run_pretraining.py` with no flags): its held-out split, its
baselines, and a short run of the whole job, export and query included."""

import pathlib
import re
import subprocess
import sys

import numpy as np

from bert_tf.pretraining.demo import majority_baselines, split_corpus
from bert_test_utils import random_pretraining_batch, write_pretraining_records

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_split_corpus_holds_out_every_tenth_article(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"Article {i} begins.\nArticle {i} ends." for i in range(25)) + "\n")
    train, heldout = split_corpus(corpus, tmp_path / "split")
    heldout_articles = heldout.read_text().strip().split("\n\n")
    assert [article.split()[1] for article in heldout_articles] == ["9", "19"]
    assert heldout_articles[0] == "Article 9 begins.\nArticle 9 ends."
    assert len(train.read_text().strip().split("\n\n")) == 23


def test_majority_baselines_by_hand(tmp_path):
    records = write_pretraining_records(tmp_path / "records.tfrecord", 40, 16, 4, 97, seed=5)
    batch = random_pretraining_batch(40, 16, 4, 97, seed=5)
    counts = np.bincount(batch["masked_lm_ids"][batch["masked_lm_weights"] > 0], minlength=97)
    random_next = batch["next_sentence_labels"].mean()
    baselines = majority_baselines(records, 16, 4)
    assert counts[baselines["masked_lm_token"]] == counts.max()
    np.testing.assert_allclose(baselines["masked_lm_accuracy"], counts.max() / counts.sum())
    np.testing.assert_allclose(baselines["next_sentence_accuracy"], max(random_next, 1 - random_next))


def test_demo_runs_the_whole_job(tmp_path):
    output_dir = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "run_pretraining.py", "--num_train_steps=4", "--num_warmup_steps=1",
         "--save_checkpoints_steps=4", "--iterations_per_loop=2", "--log_every=2", "--max_eval_steps=2",
         f"--output_dir={output_dir}"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert re.search(r"masked LM +0\.\d{3} +\(always predicting the most frequent token: 0\.\d{3}\)", out), out
    assert re.search(r"next sentence +0\.\d{3} +\(always predicting the majority label: 0\.\d{3}\)", out), out
    assert len(re.findall(r"answer: \S+ +top 5: ", out)) == 6, out  # 5 from the checkpoint, 1 from the export
    assert "encoder.mlm" in out
    assert "global_step = 4\n" in (output_dir / "eval_results.txt").read_text()
    for name in ("preprocessing", "encoder"):
        assert (output_dir / "export" / name / "saved_model.pb").is_file()
