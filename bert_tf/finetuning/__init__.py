"""The fine-tuning driver of every task script: flags, optimizer, training loop, best checkpoint.

A task (`bert_tf.tasks`) says how to read and encode its data, which head to use
and how to score it; `run_finetuning` does everything else.
"""

from bert_tf.lazy_exports import lazy_exports

_EXPORTS = {
    "EncodedSplit": "bert_tf.finetuning.task",
    "FineTuningOptions": "bert_tf.finetuning.options",
    "FineTuningTask": "bert_tf.finetuning.task",
    "run_finetuning": "bert_tf.finetuning.driver",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
