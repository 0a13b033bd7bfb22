"""Checkpoint interop: load Google TF1, Model Garden TF2, Hugging Face and bert_tf checkpoints; write TF1.

Example (a TF1 checkpoint written from one encoder, read into another):
>>> from bert_tf import BertConfig, BertEncoder
>>> from bert_tf.checkpoints import load_checkpoint, write_tf1_checkpoint
>>> config = BertConfig.from_json_file("bert_config.json")
>>> prefix = write_tf1_checkpoint(BertEncoder.from_bert_config(config), "tf1/bert_model.ckpt")
>>> report = load_checkpoint(prefix, BertEncoder.from_bert_config(config))
>>> report.format, report.missing, "bert/pooler/dense/kernel" in report.loaded
('tf1', [], True)
"""

from bert_tf.checkpoints.checkpoint_flags import load_init_checkpoint, resolve_bert_config
from bert_tf.checkpoints.checkpoint_weights import CheckpointError
from bert_tf.checkpoints.formats import CheckpointFormat, detect_format
from bert_tf.checkpoints.loader import LoadReport, checkpoint_config, checkpoint_labels, load_checkpoint
from bert_tf.checkpoints.tf1_checkpoint import write_tf1_checkpoint

__all__ = ["CheckpointError", "CheckpointFormat", "LoadReport", "checkpoint_config", "checkpoint_labels",
           "detect_format", "load_checkpoint", "load_init_checkpoint", "resolve_bert_config",
           "write_tf1_checkpoint"]
