"""bert_tf: BERT end to end on TensorFlow 2 and Keras 3.

Example:
>>> import bert_tf
>>> config = bert_tf.BertConfig.from_json_file("bert_config.json")
>>> encoder = bert_tf.BertEncoder.from_bert_config(config)

`keras.saving.load_model` reads a bert_tf `.keras` file once `bert_tf.models` (which
registers the Keras classes) is imported.
"""

import os as _os
import sys as _sys

# Keras 3 on the TensorFlow backend: set when unset; another backend is refused, since the models,
# the input pipeline and the exports are TensorFlow programs.
_BACKEND = _os.environ.setdefault("KERAS_BACKEND", "tensorflow")
if "keras" in _sys.modules:  # imported before bert_tf: its backend is already chosen
    _BACKEND = _sys.modules["keras"].config.backend()
if _BACKEND != "tensorflow":
    from bert_tf.errors import UserInputError

    raise UserInputError(
        f"KERAS_BACKEND={_BACKEND}: bert_tf needs Keras's TensorFlow backend; "
        "unset KERAS_BACKEND or set it to tensorflow"
    )
# TensorFlow's default CPU allocator hands large buffers, such as the masked-LM logits, back
# to the OS and page-faults them in again on every step; the BFC allocator keeps them
# (docs/design-notes.md). Read when TensorFlow creates its CPU device, so this
# takes effect if bert_tf is imported before the first op runs; a value the caller set wins.
_os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

from bert_tf.lazy_exports import lazy_exports  # noqa: E402

_EXPORTS = {
    "BertConfig": "bert_tf.bert_config",
    "ConfigError": "bert_tf.bert_config",
    "BertEncoder": "bert_tf.models",
    "BertPretrainer": "bert_tf.models",
    "pretraining_losses": "bert_tf.models",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__version__ = "0.1.0"
