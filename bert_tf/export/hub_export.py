"""`export_hub_pair`: preprocessing and encoder SavedModels side by side, as TF Hub has BERT.

The pair is one unit: both are saved in a temporary directory that then replaces `export_dir`
(`io_utils.atomic_directory`), so a failed or killed export leaves the earlier pair whole.

Example:
>>> pretrainer = BertPretrainer(BertEncoder.from_config_file("bert_config.json"))
>>> export_hub_pair(pretrainer, "export", tokenizer=BertTokenizer("vocab.txt"), seq_length=16)
{'preprocessing': 'export/preprocessing', 'encoder': 'export/encoder'}
"""

from __future__ import annotations

import os

import tensorflow as tf

from bert_tf.errors import UserInputError
from bert_tf.export.encoder_export import EncoderExport
from bert_tf.export.preprocessing_export import PreprocessingExport
from bert_tf.export.saved_model_writer import export_dir_problem
from bert_tf.export.task_module import check_packable
from bert_tf.io_utils import atomic_directory
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization.bert_tokenizer import BertTokenizer

_PARTS = ("preprocessing", "encoder")  # the subdirectories of the export


def export_hub_pair(
    model: BertEncoder | BertPretrainer,
    export_dir: str | os.PathLike,
    *,
    tokenizer: BertTokenizer,
    seq_length: int = 128,
) -> dict[str, str]:
    """Writes `export_dir/preprocessing` and `export_dir/encoder` (with `mlm` for a pretrainer).

    Both carry the vocab file as an asset; a failed export leaves the earlier pair whole.

    Args:
        model: a `BertEncoder`, or a `BertPretrainer` for an encoder with `mlm`.
        export_dir: absent, empty, or an earlier pair, which is replaced.
        tokenizer: the preprocessing's tokenizer; its vocab must fit the model's `vocab_size`.
        seq_length: the packed length: from 4 (two texts) to `max_position_embeddings`.

    Returns:
        The two SavedModels' paths, by name.

    Raises:
        UserInputError: one of the above is not so; raised before anything is written.
    """
    config = (model if isinstance(model, BertEncoder) else model.encoder).bert_config
    config.check_seq_length(seq_length)
    check_packable(seq_length, 2, "hub")
    config.check_vocab_size(len(tokenizer.vocab), tokenizer.vocab_file)
    export_dir = os.fspath(export_dir).rstrip("/")
    _check_targets(export_dir)
    preprocessing = PreprocessingExport(tokenizer, seq_length)
    encoder = EncoderExport(model, tokenizer.vocab_file, tokenizer.do_lower_case)
    serving = {
        "preprocessing": (preprocessing, preprocessing.__call__),
        "encoder": (encoder, encoder.serve),
    }
    with atomic_directory(export_dir) as tmp:
        for part, (module, function) in serving.items():
            tf.saved_model.save(
                module,
                os.path.join(tmp, part),
                signatures={"serving_default": function.get_concrete_function()},
            )
    return {part: os.path.join(export_dir, part) for part in _PARTS}


def _check_targets(export_dir: str) -> None:
    """Raises `UserInputError` naming `export_dir` unless it is absent, empty or
    an earlier pair: it is a file, one of its `_PARTS` may not take an
    export, or it holds anything else (which the new pair would replace)."""
    if not tf.io.gfile.exists(export_dir):
        return
    if not tf.io.gfile.isdir(export_dir):
        raise UserInputError(f"`export_dir`={export_dir}: is a file, not a directory")
    for part in _PARTS:
        problem = export_dir_problem(os.path.join(export_dir, part))
        if problem:
            raise UserInputError(f"`export_dir`={export_dir}: its {part}/ {problem}")
    others = sorted({name.rstrip("/") for name in tf.io.gfile.listdir(export_dir)} - set(_PARTS))
    if others:
        raise UserInputError(
            f"`export_dir`={export_dir}: holds files other than preprocessing/ "
            f"and encoder/ ({', '.join(others)}), which the export would replace; "
            "choose an empty or new directory"
        )
