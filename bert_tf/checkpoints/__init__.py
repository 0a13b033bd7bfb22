"""Checkpoint interop: load Google TF1, Model Garden TF2, Hugging Face and bert_tf checkpoints; write TF1.

Example:
>>> from bert_tf.checkpoints import load_checkpoint
>>> report = load_checkpoint("uncased_L-12_H-768_A-12/bert_model.ckpt", encoder)  # doctest: +SKIP
"""

from bert_tf.checkpoints.checkpoint_flags import load_init_checkpoint, resolve_bert_config
from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.formats import CheckpointFormat, detect_format
from bert_tf.checkpoints.loader import LoadReport, checkpoint_config, checkpoint_labels, load_checkpoint
from bert_tf.checkpoints.tf1_checkpoint import write_tf1_checkpoint

__all__ = ["CheckpointError", "CheckpointFormat", "LoadReport", "checkpoint_config", "checkpoint_labels",
           "detect_format", "load_checkpoint", "load_init_checkpoint", "resolve_bert_config",
           "write_tf1_checkpoint"]
