"""`export_hub_pair`: the preprocessing and encoder SavedModels, side by side, as TF Hub publishes BERT."""

from __future__ import annotations

import os

from bert_tf.export.encoder_export import EncoderExport
from bert_tf.export.preprocessing_export import PreprocessingExport
from bert_tf.export.saved_model_writer import save_atomically
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


def export_hub_pair(model: BertEncoder | BertPretrainer, export_dir: str | os.PathLike, *,
                    tokenizer: BertTokenizer, seq_length: int = 128) -> dict[str, str]:
    """Writes `export_dir/preprocessing` and `export_dir/encoder` (with `mlm` for a pretrainer).

    Returns their paths by name. Both carry the vocab file as an asset. `seq_length`
    beyond the model's `max_position_embeddings`, or a vocab beyond its `vocab_size`,
    is an error.

    Example:
    >>> pretrainer = BertPretrainer(BertEncoder.from_config_file("bert_config.json"))
    >>> export_hub_pair(pretrainer, "export", tokenizer=BertTokenizer("vocab.txt"), seq_length=16)
    {'preprocessing': 'export/preprocessing', 'encoder': 'export/encoder'}
    """
    config = (model if isinstance(model, BertEncoder) else model.encoder).bert_config
    config.check_seq_length(seq_length)
    config.check_vocab_size(len(tokenizer.vocab), tokenizer.vocab_file)
    export_dir = os.fspath(export_dir)
    preprocessing = PreprocessingExport(tokenizer, seq_length)
    encoder = EncoderExport(model, tokenizer.vocab_file)
    return {
        "preprocessing": save_atomically(preprocessing, os.path.join(export_dir, "preprocessing"),
                                         signatures={"serving_default": preprocessing.__call__.get_concrete_function()}),
        "encoder": save_atomically(encoder, os.path.join(export_dir, "encoder"),
                                   signatures={"serving_default": encoder.serve.get_concrete_function()}),
    }
