"""Sentence(-pair) classification and regression (GLUE, XNLI, CSV/TSV) for the fine-tuning driver.

`run_classifier.py` runs it. The model is `BertClassifier` (K = 1 for STS-B);
the loss is cross-entropy with optional label smoothing, or mean squared error
for regression; the metrics are each GLUE task's official ones.

Example:
>>> from bert_tf.finetuning import FineTuningOptions
>>> from bert_tf.tokenization import BertTokenizer
>>> options = FineTuningOptions(data_dir=".", vocab_file="vocab.txt", output_dir="out",
...                             max_seq_length=16)
>>> task = SentencePredictionTask(options, BertTokenizer(options.vocab_file),
...                               "SST-2")  # reads dev.tsv
>>> task.label_list, task.encode("dev").features["input_word_ids"].shape
(('0', '1'), (2, 16))
"""

from __future__ import annotations

import os

import keras
import numpy as np
from scipy import special

from bert_tf.data import glue
from bert_tf.errors import UserInputError
from bert_tf.finetuning.losses import SparseCrossEntropy
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.finetuning.task_labels import task_labels
from bert_tf.io_utils import atomic_write_rows
from bert_tf.metrics import classification_metrics
from bert_tf.models import BertClassifier
from bert_tf.models.bert_task_model import LOGITS


class SentencePredictionTask(FineTuningTask):
    """`[CLS] A [SEP] (B [SEP])` -> one label (or a score); `task_name` picks the data and metric.

    `task_name` is a GLUE task (MRPC, SST-2, MNLI, ...), XNLI in `xnli_language`, or
    csv/tsv for the user's own files, whose columns the `*_column` arguments name.
    """

    def __init__(
        self,
        options,
        tokenizer,
        task_name: str | None,
        *,
        text_a_column: str = "text",
        text_b_column: str | None = None,
        label_column: str = "label",
        xnli_language: str = "zh",
    ):
        super().__init__(options, tokenizer)
        if not task_name:
            raise UserInputError(
                "`task_name` is required: a GLUE task (e.g. MRPC, SST-2, MNLI), XNLI, or csv/tsv"
            )
        self.processor = glue.get_processor(
            task_name, text_a_column, text_b_column, label_column, xnli_language
        )
        self.task = glue.normalize_task_name(task_name)
        self.main_metric = classification_metrics.main_metric(self.task)
        self.eval_splits = self.processor.eval_splits
        self.predict_splits = self.processor.predict_splits
        self._label_list = None

    @property
    def label_list(self) -> tuple[str, ...] | None:
        """The label strings in id order; None for regression.

        GLUE's and XNLI's are fixed; csv/tsv's are read from the training file, or, in a run
        without `--do_train`, saved with the checkpoint it restores (`task_labels`).
        """
        if self._label_list is None and not self.processor.is_regression:
            fixed = not isinstance(self.processor, glue.DelimitedFileProcessor)
            source = (
                f"`task_name`={self.processor.name}"
                if fixed
                else os.path.join(self.options.data_dir, self.processor.file_name("train"))
            )
            self._label_list = task_labels(
                self, lambda: self.processor.labels(self.options.data_dir), source, fixed
            )
        return self._label_list

    @property
    def num_classes(self) -> int:
        return 1 if self.processor.is_regression else len(self.label_list)

    def build_model(self, encoder) -> keras.Model:
        return BertClassifier(
            encoder, self.num_classes, head_initializer=self.options.head_initializer
        )

    def loss(self, label_smoothing: float = 0.0):
        """Mean squared error for regression; else cross-entropy, optionally smoothed."""
        if self.processor.is_regression:
            if label_smoothing:
                raise UserInputError(
                    f"`label_smoothing` is for classification; {self.task} is a regression task"
                )
            return {LOGITS: keras.losses.MeanSquaredError()}  # scores [batch] vs logits [batch, 1]
        return {LOGITS: SparseCrossEntropy(label_smoothing)}

    def encode(self, split: str) -> EncodedSplit:
        """The split's inputs and labels (None for the test files); metadata is the examples."""
        examples = self.processor.read(self.options.data_dir, split, self.label_list)
        if not examples:
            raise glue.DataError(
                f"{self.options.data_dir}/{self.processor.file_name(split)}: no examples"
            )
        features, labels = glue.encode_examples(
            self.tokenizer, examples, self.label_list, self.options.max_seq_length
        )
        return EncodedSplit(
            features, None if labels is None else {LOGITS: labels}, metadata=examples
        )

    def evaluate(self, split, encoded, outputs) -> dict[str, float]:
        return classification_metrics.classification_metrics(
            self.task, encoded.labels[LOGITS], self._predictions(outputs[LOGITS])
        )

    def write_predictions(self, split, encoded, outputs, output_dir) -> list[str]:
        """`<split>_results.tsv` (`test_results.tsv`) and, for a GLUE task, its submission file.

        `<split>_results.tsv` has the 0-based row of each example, the predicted label and
        one `probability_<label>` column per label (regression: the row and the score). A
        GLUE submission file (`MRPC.tsv`) is `index<TAB>prediction` with the file's own index.
        """
        logits = outputs[LOGITS]  # [n, num_classes]
        predictions = self._predictions(logits)  # [n]
        paths = [os.path.join(output_dir, f"{split}_results.tsv")]
        atomic_write_rows(paths[0], self._results_rows(logits, predictions), delimiter="\t")
        if isinstance(self.processor, glue.GlueProcessor):
            paths.append(os.path.join(output_dir, self.processor.submission_name(split)))
            atomic_write_rows(
                paths[1], self._submission_rows(encoded.metadata, predictions), delimiter="\t"
            )
        return paths

    def _results_rows(self, logits: np.ndarray, predictions: np.ndarray) -> list[tuple]:
        """Rows of `<split>_results.tsv`, header first: logits `[n, classes]`, predictions `[n]`."""
        if self.processor.is_regression:
            return [
                ("index", "prediction"),
                *((i, f"{score:.6f}") for i, score in enumerate(predictions)),
            ]
        probabilities = special.softmax(logits.astype(np.float64), axis=-1)  # [n, num_classes]
        return [
            ("index", "prediction", *(f"probability_{label}" for label in self.label_list)),
            *(
                (i, self.label_list[p], *(f"{x:.6f}" for x in probs))
                for i, (p, probs) in enumerate(zip(predictions, probabilities))
            ),
        ]

    def _submission_rows(
        self, examples: list[glue.InputExample], predictions: np.ndarray
    ) -> list[tuple]:
        """A GLUE submission file's rows, header first: each example's index and predicted label
        (STS-B: its score, 3 decimals)."""
        values = (
            [f"{score:.3f}" for score in predictions]
            if self.processor.is_regression
            else [self.label_list[i] for i in predictions]
        )
        return [("index", "prediction"), *((e.guid, v) for e, v in zip(examples, values))]

    def export_options(self) -> dict:
        return {} if self.processor.is_regression else {"labels": list(self.label_list)}

    def _predictions(self, logits: np.ndarray) -> np.ndarray:
        """`[n, num_classes]` logits -> class ids `[n]`, or the scores `[n]` for regression."""
        return logits[:, 0] if self.processor.is_regression else np.argmax(logits, axis=-1)
