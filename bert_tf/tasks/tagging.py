"""Token tagging (CoNLL-2003 NER with BIO/BIOES/BMES/BILOU tags, Chinese word segmentation with
B/M/E/S tags, or plain tags such as part of speech) for the driver.

`run_ner.py` runs it. `data_dir` holds `train.txt`, `dev.txt` and `test.txt` in
CoNLL format (`bert_tf.data.conll`; Chinese corpora such as MSRA have one
character a line); the label set is read from `train.txt`, or
comes with the checkpoint of an eval/predict-only run. The model is
`BertTokenClassifier`; only the first WordPiece of each word is scored.
Entity tags report token accuracy and seqeval's entity precision/recall/F1 (F1
picks the best checkpoint); segmentation tags the word precision/recall/F1 of
their spans; plain tags report token accuracy.

Example:
>>> from bert_tf.finetuning import FineTuningOptions
>>> from bert_tf.tokenization import BertTokenizer
>>> options = FineTuningOptions(data_dir=".", vocab_file="vocab.txt", output_dir="out",
...                             max_seq_length=16)
>>> task = TaggingTask(options, BertTokenizer(options.vocab_file))  # reads train.txt
>>> task.label_list, task.main_metric
(['B-LOC', 'B-PER', 'I-PER', 'O'], 'f1')
"""

from __future__ import annotations

import os

import keras
import numpy as np

from bert_tf.data import conll
from bert_tf.finetuning.losses import SparseCrossEntropy
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.finetuning.task_labels import task_labels
from bert_tf.metrics import tagging_metrics
from bert_tf.models import BertTokenClassifier
from bert_tf.models.bert_task_model import LOGITS


class TaggingTask(FineTuningTask):
    """Words -> one tag each, from the first sub-token; long sentences in overlapping windows."""

    def __init__(self, options, tokenizer):
        super().__init__(options, tokenizer)
        self._label_list = None

    @property
    def label_list(self) -> list[str]:
        """The tags in id order: those of `train.txt`, sorted, or, in a run without `--do_train`,
        those saved with the checkpoint it restores (`task_labels`)."""
        if self._label_list is None:
            self._label_list = list(task_labels(self, self._training_tags, self._path("train")))
        return self._label_list

    def _training_tags(self) -> list[str]:
        """The sorted tags of `train.txt`; at least two."""
        labels = conll.label_list(conll.read_conll(self._path("train")))
        if len(labels) < 2:
            raise conll.ConllError(
                f"{self._path('train')}: every word has the tag {labels[0]!r}; "
                "tagging needs at least two tags"
            )
        return labels

    @property
    def scheme(self) -> str | None:
        """ "BIO", "BIOES", "BMES" or "BILOU" for entity tags, "segmentation" for B/M/E/S word tags,
        None for plain tags."""
        return tagging_metrics.entity_scheme(self.label_list)

    @property
    def main_metric(self) -> str:
        return "accuracy" if self.scheme is None else "f1"

    def build_model(self, encoder) -> keras.Model:
        return BertTokenClassifier(
            encoder, len(self.label_list), head_initializer=self.options.head_initializer
        )

    def loss(self, label_smoothing: float = 0.0):
        # mean over the weighted first sub-tokens
        return {LOGITS: SparseCrossEntropy(label_smoothing)}

    def encode(self, split: str) -> EncodedSplit:
        """Windows of the split; a tag of dev/test outside the training tags is an error naming its
        line. A test file may hold words alone (text to tag)."""
        sentences = conll.read_conll(
            self._path(split),
            labels=None if split == "train" else self.label_list,
            untagged_ok=split in self.predict_splits,
        )
        windows = conll.encode_sentences(
            sentences, self.tokenizer, self.label_list, self.options.max_seq_length
        )
        return EncodedSplit(
            windows.features,
            {LOGITS: windows.label_ids},
            windows.label_weights,
            metadata=windows,
            num_examples=len(sentences),
        )

    def evaluate(self, split, encoded, outputs) -> dict[str, float]:
        gold, predicted = self._gold_and_predicted(encoded, outputs)
        return tagging_metrics.tagging_scores(gold, predicted, self.scheme)

    def write_predictions(self, split, encoded, outputs, output_dir) -> list[str]:
        """`<split>_predictions.txt`: `word gold predicted` per line (`word predicted` for words
        without tags), a blank line between sentences."""
        gold, predicted = self._gold_and_predicted(encoded, outputs)
        path = os.path.join(output_dir, f"{split}_predictions.txt")
        tagging_metrics.write_conll_predictions(
            path, [s.words for s in encoded.metadata.sentences], gold, predicted
        )
        return [path]

    def export_options(self) -> dict:
        return {"labels": list(self.label_list)}

    def _gold_and_predicted(
        self, encoded, outputs
    ) -> tuple[list[list[str]] | None, list[list[str]]]:
        """(the gold tags, None for a file of words alone; the predicted tags), per sentence."""
        windows = encoded.metadata
        label_ids = np.argmax(outputs[LOGITS], axis=-1)  # [n, seq]
        predicted = [
            [self.label_list[i] for i in sentence] for sentence in windows.decode(label_ids)
        ]
        if windows.sentences[0].labels is None:
            return None, predicted
        return [list(s.labels) for s in windows.sentences], predicted

    def _path(self, split: str) -> str:
        return os.path.join(self.options.data_dir, f"{split}.txt")
