"""bert_tf: BERT end to end on TensorFlow 2 and Keras 3.

Example:
>>> import bert_tf
>>> config = bert_tf.BertConfig.from_json_file("configs/tiny/bert_config.json")
>>> encoder = bert_tf.BertEncoder.from_bert_config(config)
"""

import os as _os

# Keras 3 on the TensorFlow backend, whatever KERAS_BACKEND the caller set.
_os.environ["KERAS_BACKEND"] = "tensorflow"

from bert_tf.bert_config import BertConfig, ConfigError  # noqa: E402
from bert_tf.models import BertEncoder, BertPretrainer, pretraining_losses  # noqa: E402

__all__ = ["BertConfig", "BertEncoder", "BertPretrainer", "ConfigError", "pretraining_losses"]
__version__ = "0.1.0"
