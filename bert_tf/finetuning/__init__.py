"""The fine-tuning driver shared by every task script: flags, optimizer, training loop, best checkpoint.

A task (`bert_tf.tasks`) says how to read and encode its data, which head to use
and how to score it; `run_finetuning` does everything else.
"""

from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask

__all__ = ["EncodedSplit", "FineTuningOptions", "FineTuningTask", "run_finetuning"]
