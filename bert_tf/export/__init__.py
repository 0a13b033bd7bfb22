"""SavedModel export: the TF-Hub-style preprocessing + encoder pair, and task models with text signatures.

Example:
>>> from bert_tf.export import export_task_model
>>> export_task_model(classifier, "exported/", tokenizer=tokenizer, seq_length=128,
...                   labels=["negative", "positive"])  # doctest: +SKIP
"""

from bert_tf.export.hub_export import export_hub_pair
from bert_tf.export.task_export import export_task_model

__all__ = ["export_hub_pair", "export_task_model"]
