"""Multiple choice (SWAG) for the fine-tuning driver.

`run_multiple_choice.py` runs it. Each (context, choice) pair is encoded, the
`BertMultipleChoice` head scores it, and a softmax over the four choices is
trained with cross-entropy (label smoothing optional). The metric is accuracy on
`val.csv`; `--do_predict` writes `test_predictions.csv`.

Example:
>>> from bert_tf.finetuning import FineTuningOptions
>>> from bert_tf.tokenization import BertTokenizer
>>> options = FineTuningOptions(data_dir=".", vocab_file="vocab.txt", output_dir="out",
...                             max_seq_length=16)
>>> task = MultipleChoiceTask(options, BertTokenizer(options.vocab_file))  # data_dir holds val.csv
>>> task.encode("val").features["input_word_ids"].shape
(1, 4, 16)
"""

from __future__ import annotations

import os

import keras
import numpy as np
from scipy import special
from sklearn import metrics

from bert_tf.data import swag
from bert_tf.finetuning.losses import SparseCrossEntropy
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.io_utils import atomic_write_rows
from bert_tf.models import BertMultipleChoice
from bert_tf.models.bert_task_model import LOGITS


class MultipleChoiceTask(FineTuningTask):
    """SWAG: `[CLS] sent1 [SEP] sent2 ending_i [SEP]` for i in 0..3 -> the right ending."""

    main_metric = "accuracy"
    eval_splits = ("val",)
    predict_splits = ("test",)

    def build_model(self, encoder) -> keras.Model:
        return BertMultipleChoice(encoder, head_initializer=self.options.head_initializer)

    def loss(self, label_smoothing: float = 0.0):
        """Cross-entropy of the softmax over the choices."""
        return {LOGITS: SparseCrossEntropy(label_smoothing)}

    def encode(self, split: str) -> EncodedSplit:
        """`<split>.csv` of `data_dir`: features `[n, 4, seq]`, labels `[n]` (None for test; train
        and val must have them); metadata is the examples."""
        path = os.path.join(self.options.data_dir, f"{split}.csv")
        examples = swag.read_swag(path)
        if not examples:
            raise swag.SwagError(f"{path}: no examples")
        features, labels = swag.encode_swag(examples, self.tokenizer, self.options.max_seq_length)
        if labels is None and (split == "train" or split in self.eval_splits):
            raise swag.SwagError(
                f"{path}: no {swag.LABEL_COLUMN!r} column (the train and val files need one)"
            )
        return EncodedSplit(
            features, None if labels is None else {LOGITS: labels}, metadata=examples
        )

    def evaluate(self, split, encoded, outputs) -> dict[str, float]:
        predictions = np.argmax(outputs[LOGITS], axis=-1)
        return {"accuracy": metrics.accuracy_score(encoded.labels[LOGITS], predictions)}

    def write_predictions(self, split, encoded, outputs, output_dir) -> list[str]:
        """`<split>_predictions.csv`: the example's id (`swag.read_swag`'s), the
        probability of each ending `prob0..prob3` and the predicted `label`."""
        probabilities = special.softmax(outputs[LOGITS].astype(np.float64), axis=-1)  # [n, 4]
        rows = [("id", *(f"prob{i}" for i in range(swag.NUM_CHOICES)), "label")]
        rows += [
            (example.example_id, *(f"{p:.6f}" for p in probs), int(np.argmax(probs)))
            for example, probs in zip(encoded.metadata, probabilities)
        ]
        path = os.path.join(output_dir, f"{split}_predictions.csv")
        atomic_write_rows(path, rows)
        return [path]
