"""The flags of export_model.py.

Like every flag module, this one imports no TensorFlow (see `bert_tf.script`).
"""

from __future__ import annotations

from absl import flags

from bert_tf.export.model_types import MODEL_TYPES
from bert_tf.tasks.flags import define_span_flags
from bert_tf.training.runtime_flags import DTYPE_POLICIES

REQUIRED = ("model_type", "init_checkpoint", "vocab_file", "export_dir")


def define_export_flags() -> None:
    flags.DEFINE_enum("model_type", None, list(MODEL_TYPES), "What to export; hub = preprocessing + encoder pair.")
    flags.DEFINE_string("init_checkpoint", None, "The checkpoint (TF1, Model Garden, Hugging Face, bert_tf).")
    flags.DEFINE_string("bert_config_file", None, "bert_config.json; default: the one stored with the checkpoint.")
    flags.DEFINE_string("vocab_file", None, "The WordPiece vocab; stored in the export as an asset.")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
    flags.DEFINE_string("export_dir", None, "Where the SavedModel goes.")
    flags.DEFINE_list("labels", None, "Class names, in label-id order (classifier, token); default: the "
                      "names stored with the checkpoint (a bert_tf fine-tuning run's labels.json, a "
                      "Hugging Face id2label).")
    flags.DEFINE_integer("num_classes", None, "Classes; default: the checkpoint head's width (another "
                         "number is an error).", lower_bound=1)
    flags.DEFINE_integer("max_seq_length", 128, "Longest packed sequence of the text signatures: at least 4, "
                         "or 3 for token, which packs one text (one [SEP]) where the others pack two.",
                         lower_bound=3)
    define_span_flags()  # --model_type=span's, as run_squad.py's
    flags.DEFINE_bool("jit_compile", False, "Compile serving_default with XLA (faster on CPU; TF Serving then "
                      "needs --xla_cpu_compilation_enabled). Task models only.")
    flags.DEFINE_enum("dtype", "float32", list(DTYPE_POLICIES),
                      "The dtype the export stores its weights in and computes in; LayerNorm and the "
                      "attention softmax stay float32. bfloat16 halves the SavedModel and is faster on CPUs "
                      "with AVX512_BF16 or AMX.")
    for name in REQUIRED:
        flags.mark_flag_as_required(name)
