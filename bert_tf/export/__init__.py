"""SavedModel export: the TF Hub preprocessing + encoder pair, and task models with text signatures.

Example:
>>> from bert_tf.export import export_task_model
>>> from bert_tf.models import BertClassifier, BertEncoder
>>> from bert_tf.tokenization import BertTokenizer
>>> classifier = BertClassifier(BertEncoder.from_config_file("bert_config.json"), num_classes=2)
>>> export_task_model(classifier, "export/classifier", tokenizer=BertTokenizer("vocab.txt"),
...                   seq_length=16, labels=["negative", "positive"])
'export/classifier'
"""

from bert_tf.lazy_exports import lazy_exports

_EXPORTS = {
    "export_hub_pair": "bert_tf.export.hub_export",
    "export_task_model": "bert_tf.export.task_export",
    "with_weights_in": "bert_tf.export.weight_dtype",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
