"""Checkpoint interop: load TF1, Model Garden TF2, Hugging Face and bert_tf checkpoints; write TF1.

Example (a TF1 checkpoint written from one encoder, read into another):
>>> from bert_tf import BertConfig, BertEncoder
>>> from bert_tf.checkpoints import load_checkpoint, write_tf1_checkpoint
>>> config = BertConfig.from_json_file("bert_config.json")
>>> prefix = write_tf1_checkpoint(BertEncoder.from_bert_config(config), "tf1/bert_model.ckpt")
>>> report = load_checkpoint(prefix, BertEncoder.from_bert_config(config))
>>> report.format, report.missing, "bert/pooler/dense/kernel" in report.loaded
('tf1', [], True)
"""

from bert_tf.lazy_exports import lazy_exports

_EXPORTS = {
    "CheckpointError": "bert_tf.checkpoints.checkpoint_weights",
    "CheckpointFormat": "bert_tf.checkpoints.formats",
    "checkpoint_files": "bert_tf.checkpoints.formats",
    "detect_format": "bert_tf.checkpoints.formats",
    "LoadReport": "bert_tf.checkpoints.loader",
    "load_checkpoint": "bert_tf.checkpoints.loader",
    "StartingCheckpoint": "bert_tf.checkpoints.starting_checkpoint",
    "checkpoint_config": "bert_tf.checkpoints.starting_checkpoint",
    "checkpoint_labels": "bert_tf.checkpoints.starting_checkpoint",
    "resolve_starting_checkpoint": "bert_tf.checkpoints.starting_checkpoint",
    "load_init_checkpoint": "bert_tf.checkpoints.loader",
    "resolve_bert_config": "bert_tf.checkpoints.starting_checkpoint",
    "resolve_init_checkpoint": "bert_tf.checkpoints.starting_checkpoint",
    "write_tf1_checkpoint": "bert_tf.checkpoints.tf1_checkpoint",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
