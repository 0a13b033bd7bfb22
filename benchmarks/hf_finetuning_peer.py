"""Hugging Face transformers (PyTorch) fine-tuning as the fine-tuning benchmark's peer.

A hand-written loop with Hugging Face's usual parts: torch's AdamW (its default epsilon,
1e-8; weight decay except LayerNorm and biases), `get_linear_schedule_with_warmup` (linear
warmup, then linear decay from the peak to 0) and clipping of the global gradient norm.
Batches come as bert_tf's driver draws them: from one shuffled permutation after another,
`round(examples / batch)` steps an epoch. Inputs are padded to `max_seq_length`, as bert_tf
pads them; only the first sub-token of each word carries a tag.

    python benchmarks/hf_finetuning_peer.py --data_dir=DIR --init_checkpoint=HF_DIR \
        --output_file=out.json --random_seed=1

It reads the files bert_tf's scripts read (`train.csv` and `test.csv`, or `train.txt` and
`test.txt`, as `finetuning_data` writes them), takes the labels of the training file, sorted,
and writes `{"predictions": ..., "seconds": ..., "examples": ...}`: the test predictions
(labels, or tags per sentence) and the training loop's time and examples.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ["HF_HUB_OFFLINE"] = "1"  # the checkpoint is a local directory; nothing is downloaded
os.environ["USE_TF"] = "0"  # transformers would otherwise import TensorFlow too

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks import finetuning_data as data  # noqa: E402

flags.DEFINE_string("data_dir", None, "The task's files.", required=True)
flags.DEFINE_string(
    "init_checkpoint", None, "Hugging Face checkpoint directory (with vocab.txt).", required=True
)
flags.DEFINE_string("output_file", None, "The JSON results to write.", required=True)
flags.DEFINE_integer("max_seq_length", 128, "Tokens per input, [CLS] and [SEP] included.")
flags.DEFINE_integer("train_batch_size", 32, "Training batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate of AdamW.")
flags.DEFINE_integer("num_train_epochs", 2, "Training epochs.")
flags.DEFINE_integer("random_seed", 12345, "Seed of the head's initialisation, dropout and order.")
flags.DEFINE_integer("threads", 2, "torch's intra- and inter-op threads.")
FLAGS = flags.FLAGS

IGNORED = -100  # torch's cross-entropy ignore_index: the sub-tokens after a word's first


@dataclasses.dataclass(frozen=True)
class Hyperparameters:
    max_seq_length: int
    epochs: int
    seed: int
    batch_size: int = 32
    learning_rate: float = 5e-5
    warmup_proportion: float = 0.1
    weight_decay: float = 0.01
    clip_norm: float = 1.0
    epsilon: float = 1e-8  # torch's AdamW default, as Hugging Face's Trainer uses
    eval_batch_size: int = 64


def steps_per_epoch(num_examples: int, batch_size: int) -> int:
    """bert_tf's driver's: whole batches, as many as the examples fill when rounded."""
    return max(1, round(num_examples / batch_size))


def tokenizer(checkpoint: str) -> transformers.BertTokenizerFast:
    return transformers.BertTokenizerFast.from_pretrained(checkpoint, do_lower_case=True)


def encode_texts(tok, texts_a, texts_b, max_seq_length: int) -> dict[str, torch.Tensor]:
    """`[CLS] a [SEP] (b [SEP])`, the longer text cut first, padded to `max_seq_length`."""
    return dict(
        tok(
            list(texts_a),
            None if texts_b is None else list(texts_b),
            truncation=True,
            max_length=max_seq_length,
            padding="max_length",
            return_tensors="pt",
        )
    )


def first_sub_tokens(word_ids: list[int | None]) -> dict[int, int]:
    """word index -> the position of its first sub-token, for one row's `word_ids`."""
    return {
        word: position
        for position, word in enumerate(word_ids)
        if word is not None and (position == 0 or word_ids[position - 1] != word)
    }


def encode_words(tok, sentences, max_seq_length: int, label_ids=None):
    """(features, labels `[n, seq]` or None, word ids per row) of word-split sentences; a word's
    tag sits on its first sub-token, every other position is `IGNORED`."""
    features = tok(
        list(sentences),
        is_split_into_words=True,
        truncation=True,
        max_length=max_seq_length,
        padding="max_length",
        return_tensors="pt",
    )
    word_ids = [features.word_ids(row) for row in range(len(sentences))]
    labels = None
    if label_ids is not None:
        labels = torch.full(features["input_ids"].shape, IGNORED)
        for row, ids in enumerate(word_ids):
            for word, position in first_sub_tokens(ids).items():
                labels[row, position] = label_ids[row][word]
    return dict(features), labels, word_ids


def fine_tune(
    model: torch.nn.Module,
    features: dict[str, torch.Tensor],
    labels: torch.Tensor,
    hp: Hyperparameters,
) -> tuple[float, int]:
    """Trains `model` in place; returns (seconds of the training loop, examples trained)."""
    num_examples = len(labels)
    steps = steps_per_epoch(num_examples, hp.batch_size) * hp.epochs
    no_decay = [p for n, p in model.named_parameters() if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in model.named_parameters() if not ("LayerNorm" in n or n.endswith("bias"))]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": hp.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=hp.learning_rate,
        betas=(0.9, 0.999),
        eps=hp.epsilon,
    )
    schedule = transformers.get_linear_schedule_with_warmup(
        optimizer, int(steps * hp.warmup_proportion), steps
    )
    generator = torch.Generator().manual_seed(hp.seed)
    permutations = -(-steps * hp.batch_size // num_examples)
    order = torch.cat(
        [torch.randperm(num_examples, generator=generator) for _ in range(permutations)]
    )
    model.train()
    start = time.perf_counter()
    for step in range(steps):
        batch = order[step * hp.batch_size : (step + 1) * hp.batch_size]
        loss = model(**{k: v[batch] for k, v in features.items()}, labels=labels[batch]).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp.clip_norm)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
    return time.perf_counter() - start, steps * hp.batch_size


@torch.no_grad()
def predict(
    model: torch.nn.Module, features: dict[str, torch.Tensor], batch_size: int
) -> np.ndarray:
    """The argmax class of each example (`[n]`) or of each token (`[n, seq]`)."""
    model.eval()
    n = len(features["input_ids"])
    return np.concatenate(
        [
            model(**{k: v[i : i + batch_size] for k, v in features.items()})
            .logits.argmax(-1)
            .numpy()
            for i in range(0, n, batch_size)
        ]
    )


def classify(checkpoint: str, train, test, labels: list[str], hp: Hyperparameters):
    """Fine-tunes a `BertForSequenceClassification` on (text_a, text_b or None, label) rows and
    predicts `test`'s labels; returns (predicted labels, seconds, examples trained)."""
    transformers.set_seed(hp.seed)
    tok = tokenizer(checkpoint)
    model = transformers.BertForSequenceClassification.from_pretrained(
        checkpoint, num_labels=len(labels)
    )
    ids = {label: i for i, label in enumerate(labels)}

    def encode(rows):
        texts_b = None if rows[0][1] is None else [row[1] for row in rows]
        return encode_texts(tok, [row[0] for row in rows], texts_b, hp.max_seq_length)

    targets = torch.tensor([ids[row[2]] for row in train])
    seconds, trained = fine_tune(model, encode(train), targets, hp)
    predicted = predict(model, encode(test), hp.eval_batch_size)
    return [labels[i] for i in predicted], seconds, trained


def tag(checkpoint: str, train, test, labels: list[str], hp: Hyperparameters):
    """Fine-tunes a `BertForTokenClassification` on [(word, tag)] sentences and tags `test`'s
    words from their first sub-tokens (None for a word cut off or without sub-tokens); returns
    (predicted tags per sentence, seconds, examples trained)."""
    transformers.set_seed(hp.seed)
    tok = tokenizer(checkpoint)
    model = transformers.BertForTokenClassification.from_pretrained(
        checkpoint, num_labels=len(labels)
    )
    ids = {label: i for i, label in enumerate(labels)}
    tags = [[ids[t] for _, t in s] for s in train]
    features, label_ids, _ = encode_words(
        tok, [[w for w, _ in s] for s in train], hp.max_seq_length, tags
    )
    seconds, trained = fine_tune(model, features, label_ids, hp)
    features, _, word_ids = encode_words(tok, [[w for w, _ in s] for s in test], hp.max_seq_length)
    predicted = predict(model, features, hp.eval_batch_size)
    tags = []
    for sentence, row, ids_of_row in zip(test, predicted, word_ids):
        first = first_sub_tokens(ids_of_row)
        tags.append([labels[row[first[w]]] if w in first else None for w in range(len(sentence))])
    return tags, seconds, trained


def main(argv):
    del argv
    torch.set_num_threads(FLAGS.threads)
    torch.set_num_interop_threads(FLAGS.threads)
    hp = Hyperparameters(
        max_seq_length=FLAGS.max_seq_length,
        epochs=FLAGS.num_train_epochs,
        seed=FLAGS.random_seed,
        batch_size=FLAGS.train_batch_size,
        learning_rate=FLAGS.learning_rate,
    )
    directory = pathlib.Path(FLAGS.data_dir)
    if (directory / "train.txt").exists():
        train, test = (data.read_conll(directory / f"{split}.txt") for split in ("train", "test"))
        labels = sorted({tag for sentence in train for _, tag in sentence})
        predictions, seconds, examples = tag(FLAGS.init_checkpoint, train, test, labels, hp)
    else:
        train, test = (data.read_csv(directory / f"{split}.csv") for split in ("train", "test"))
        labels = sorted({label for _, _, label in train})
        predictions, seconds, examples = classify(FLAGS.init_checkpoint, train, test, labels, hp)
    pathlib.Path(FLAGS.output_file).write_text(
        json.dumps({"predictions": predictions, "seconds": seconds, "examples": examples})
    )


if __name__ == "__main__":
    app.run(main)
