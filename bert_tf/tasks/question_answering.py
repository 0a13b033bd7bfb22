"""Extractive question answering (SQuAD v1.1 / v2.0) for the fine-tuning driver; see run_squad.py.

Data: `--train_file` and `--predict_file`, by default `train-v1.1.json` and
`dev-v1.1.json` (`-v2.0` with `--version_2_with_negative`) in `--data_dir`, which is
needed only for a file they leave unnamed. Only the training file's `answer_start`s
must give their answer texts: the predict file is scored on the texts alone.
The model is `BertSpanLabeler`; the loss is the mean of the start and end
cross-entropies; the dev metric is the official SQuAD F1. `task="cmrc2018"` reads
CMRC 2018 (the same JSON, Chinese; `cmrc2018_{train,dev}.json`) and scores it with
CMRC 2018's character-level EM/F1.

Example:
>>> from bert_tf.finetuning import FineTuningOptions
>>> from bert_tf.tokenization import BertTokenizer
>>> options = FineTuningOptions(data_dir=".", vocab_file="vocab.txt", output_dir="out",
...                             max_seq_length=16)
>>> task = SquadTask(options, BertTokenizer(options.vocab_file),
...                  max_query_length=8)  # reads dev-v1.1.json
>>> task.encode("dev").features["input_word_ids"].shape
(1, 16)
"""

from __future__ import annotations

import contextlib
import json
import os

import keras
import tensorflow as tf

from bert_tf.data import squad
from bert_tf.errors import UserInputError
from bert_tf.finetuning.losses import SparseCrossEntropy
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.io_utils import atomic_write_texts
from bert_tf.metrics import squad_metrics
from bert_tf.models import BertSpanLabeler

OUTPUTS = ("start_logits", "end_logits")


class SquadTask(FineTuningTask):
    """SQuAD fine-tuning: windows of `[CLS] question [SEP] context [SEP]`, span logits, EM/F1."""

    main_metric = "f1"
    eval_splits = ("dev",)
    predict_splits = ("dev",)  # the hidden SQuAD test set is run on the predict file's format

    def __init__(
        self,
        options,
        tokenizer,
        *,
        train_file: str | None = None,
        predict_file: str | None = None,
        version_2_with_negative: bool = False,
        doc_stride: int = 128,
        max_query_length: int = 64,
        n_best_size: int = 20,
        max_answer_length: int = 30,
        null_score_diff_threshold: float = 0.0,
        verbose_logging: bool = False,
        task: str = "squad",
    ):
        super().__init__(options, tokenizer)
        if task == "cmrc2018" and version_2_with_negative:
            raise UserInputError(
                "`task`=cmrc2018 has no unanswerable questions: drop `version_2_with_negative`"
            )
        for flag, value in (("n_best_size", n_best_size), ("max_answer_length", max_answer_length)):
            if value < 1:
                raise UserInputError(f"`{flag}` must be positive, got {value}")
        version = "v2.0" if version_2_with_negative else "v1.1"
        names = {
            split: f"cmrc2018_{split}.json" if task == "cmrc2018" else f"{split}-{version}.json"
            for split in ("train", "dev")
        }
        # None without --data_dir
        in_data_dir = {
            split: options.data_dir and os.path.join(options.data_dir, name)
            for split, name in names.items()
        }
        self.files = {
            "train": train_file or in_data_dir["train"],
            "dev": predict_file or in_data_dir["dev"],
        }
        self.version_2_with_negative = version_2_with_negative
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.n_best_size = n_best_size
        self.max_answer_length = max_answer_length
        self.null_score_diff_threshold = null_score_diff_threshold
        self.verbose_logging = verbose_logging
        self.task = task
        self._postprocessed = None  # (outputs, their SquadPredictions): the last post-processing

    def build_model(self, encoder) -> keras.Model:
        return BertSpanLabeler(encoder, head_initializer=self.options.head_initializer)

    def loss(self, label_smoothing: float = 0.0):
        """Half the cross-entropy over the sequence per output: their sum is the mean of the two."""
        return {name: SparseCrossEntropy(label_smoothing, scale=0.5) for name in OUTPUTS}

    def encode(self, split: str) -> EncodedSplit:
        """The split's windows; metadata is `(examples, SquadFeatures)` for post-processing."""
        examples = squad.read_squad_examples(
            self.files[split],
            self.version_2_with_negative,
            require_answers=split == "train" or self.options.do_eval,
            check_answer_start=split == "train",
            verbose_logging=self.verbose_logging,
        )
        if not examples:
            raise UserInputError(f"{self.files[split]}: no questions")
        features = squad.convert_examples_to_features(
            examples,
            self.tokenizer,
            self.options.max_seq_length,
            self.doc_stride,
            self.max_query_length,
        )
        labels = {"start_logits": features.start_positions, "end_logits": features.end_positions}
        return EncodedSplit(
            features.inputs, labels, metadata=(examples, features), num_examples=len(examples)
        )

    def evaluate(self, split, encoded, outputs) -> dict[str, float]:
        examples, _ = encoded.metadata
        result = self._postprocess(encoded, outputs)
        if self.task == "cmrc2018":
            return squad_metrics.evaluate_cmrc2018(examples, result.predictions)
        return squad_metrics.evaluate(
            examples,
            result.predictions,
            result.null_odds if self.version_2_with_negative else None,
            self.version_2_with_negative,
        )

    def write_predictions(self, split, encoded, outputs, output_dir) -> list[str]:
        """`predictions.json`, `nbest_predictions.json` and, for SQuAD 2.0, `null_odds.json`, as a
        set: a kill leaves a reused output_dir's older files beside new ones only between their
        renames. SQuAD 1.1 removes a `null_odds.json` that an earlier SQuAD 2.0 run left there."""
        result = self._postprocess(encoded, outputs)
        files = {"predictions.json": result.predictions, "nbest_predictions.json": result.nbest}
        if self.version_2_with_negative:
            files["null_odds.json"] = result.null_odds
        texts = {
            os.path.join(output_dir, name): json.dumps(value, indent=2, ensure_ascii=False) + "\n"
            for name, value in files.items()
        }
        atomic_write_texts(texts)
        if not self.version_2_with_negative:  # it would pass for these answers' odds
            with contextlib.suppress(tf.errors.NotFoundError):
                tf.io.gfile.remove(os.path.join(output_dir, "null_odds.json"))
        return list(texts)

    def export_options(self) -> dict:
        return {
            "max_answer_length": self.max_answer_length,
            "doc_stride": self.doc_stride,
            "max_query_length": self.max_query_length,
            "version_2_with_negative": self.version_2_with_negative,
            "null_score_diff_threshold": self.null_score_diff_threshold,
            "n_best_size": self.n_best_size,
        }

    def _postprocess(self, encoded, outputs) -> squad_metrics.SquadPredictions:
        """The answers for `outputs`; computed once when the outputs are scored, then written."""
        if self._postprocessed is None or self._postprocessed[0] is not outputs:
            examples, features = encoded.metadata
            self._postprocessed = (
                outputs,
                squad_metrics.postprocess(
                    examples,
                    features,
                    outputs["start_logits"],
                    outputs["end_logits"],
                    self.n_best_size,
                    self.max_answer_length,
                    self.version_2_with_negative,
                    self.null_score_diff_threshold,
                    self.verbose_logging,
                ),
            )
        return self._postprocessed[1]
