"""`export_hub_pair`: the preprocessing and encoder SavedModels, side by side, as TF Hub publishes BERT."""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.export.encoder_export import EncoderExport
from bert_tf.export.preprocessing_export import PreprocessingExport
from bert_tf.export.saved_model_writer import export_dir_problem, save_atomically
from bert_tf.export.task_module import check_packable
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

_PARTS = ("preprocessing", "encoder")  # the subdirectories of the export


def export_hub_pair(model: BertEncoder | BertPretrainer, export_dir: str | os.PathLike, *,
                    tokenizer: BertTokenizer, seq_length: int = 128) -> dict[str, str]:
    """Writes `export_dir/preprocessing` and `export_dir/encoder` (with `mlm` for a pretrainer).

    Returns their paths by name. Both carry the vocab file as an asset. `seq_length`
    beyond the model's `max_position_embeddings` or below 4 (`bert_pack_inputs` packs
    two texts), a vocab beyond its `vocab_size`, or a subdirectory that holds anything
    but an earlier export is an error, raised before either is written.

    Example:
    >>> pretrainer = BertPretrainer(BertEncoder.from_config_file("bert_config.json"))
    >>> export_hub_pair(pretrainer, "export", tokenizer=BertTokenizer("vocab.txt"), seq_length=16)
    {'preprocessing': 'export/preprocessing', 'encoder': 'export/encoder'}
    """
    config = (model if isinstance(model, BertEncoder) else model.encoder).bert_config
    config.check_seq_length(seq_length)
    check_packable(seq_length, 2, "hub")
    config.check_vocab_size(len(tokenizer.vocab), tokenizer.vocab_file)
    export_dir = os.fspath(export_dir).rstrip("/")
    _check_targets(export_dir)
    preprocessing = PreprocessingExport(tokenizer, seq_length)
    encoder = EncoderExport(model, tokenizer.vocab_file)
    serving = {"preprocessing": (preprocessing, preprocessing.__call__), "encoder": (encoder, encoder.serve)}
    return {part: save_atomically(module, os.path.join(export_dir, part),
                                  signatures={"serving_default": function.get_concrete_function()})
            for part, (module, function) in serving.items()}


def _check_targets(export_dir: str) -> None:
    """Raises ValueError naming `--export_dir` if it is a file or one of its `_PARTS` may not take an
    export, so that a refusal leaves neither part written."""
    if tf.io.gfile.exists(export_dir) and not tf.io.gfile.isdir(export_dir):
        raise ValueError(f"--export_dir={export_dir}: is a file, not a directory")
    for part in _PARTS:
        problem = export_dir_problem(os.path.join(export_dir, part))
        if problem:
            raise ValueError(f"--export_dir={export_dir}: its {part}/ {problem}")
