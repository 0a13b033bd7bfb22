"""SavedModel export: the TF-Hub-style preprocessing + encoder pair, and task models with text signatures.

Example:
>>> from bert_tf.export import export_task_model
>>> from bert_tf.models import BertClassifier, BertEncoder
>>> from bert_tf.tokenization import BertTokenizer
>>> classifier = BertClassifier(BertEncoder.from_config_file("bert_config.json"), num_classes=2)
>>> export_task_model(classifier, "export/classifier", tokenizer=BertTokenizer("vocab.txt"), seq_length=16,
...                   labels=["negative", "positive"])
'export/classifier'
"""

from bert_tf.export.hub_export import export_hub_pair
from bert_tf.export.task_export import export_task_model

__all__ = ["export_hub_pair", "export_task_model"]
