"""`export_task_model`: a fine-tuned task model as a SavedModel with id and text signatures.

`serving_default` takes the three int32 id tensors (stock TF Serving); the text signatures
tokenize in-graph with tensorflow-text (see each head's export class): `BertClassifier` ->
`text`, `text_pair`; `BertSpanLabeler`, `BertTokenClassifier`, `BertMultipleChoice` -> `text`.
A `BertClassifier` also gets `serve_examples` and `serve_text_examples`, on serialized
`tf.Example`s, for TF Serving's Classify API (its Regress API for one class; `ClassifierExport`).
The span options are run_squad.py's; `null_score_diff_threshold` is stored in the export and
applies with `version_2_with_negative`. `jit_compile` compiles `serving_default` with XLA
(faster on CPU; TF Serving needs `--xla_cpu_compilation_enabled` for it).
A model not built yet is built first.

Example:
>>> from bert_tf.models import BertEncoder, BertTokenClassifier
>>> encoder = BertEncoder.from_config_file("bert_config.json")
>>> tagger = BertTokenClassifier(encoder, num_classes=3)
>>> export_task_model(tagger, "export/ner", tokenizer=BertTokenizer("vocab.txt"), seq_length=16,
...                   labels=["O", "B-PER", "I-PER"])
'export/ner'
"""

from __future__ import annotations

import os

import keras

from bert_tf.checkpoints.task_heads import TASK_MODELS, task_model_type
from bert_tf.export.classifier_export import ClassifierExport
from bert_tf.export.multiple_choice_export import MultipleChoiceExport
from bert_tf.export.saved_model_writer import save_atomically
from bert_tf.export.span_export import SpanExport
from bert_tf.export.token_classifier_export import TokenClassifierExport
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


def export_task_model(
    model: keras.Model,
    export_dir: str | os.PathLike,
    *,
    tokenizer: BertTokenizer,
    seq_length: int,
    labels=None,
    max_answer_length: int = 30,
    doc_stride: int = 128,
    max_query_length: int = 64,
    version_2_with_negative: bool = False,
    null_score_diff_threshold: float = 0.0,
    n_best_size: int = 20,
    jit_compile: bool = False,
) -> str:
    """Writes `model` to `export_dir` as a SavedModel, with the signatures the module names.

    Args:
        model: a `BertClassifier`, `BertSpanLabeler`, `BertTokenClassifier` or `BertMultipleChoice`.
        export_dir: the SavedModel's directory.
        tokenizer: the text signatures' tokenizer; its vocab (an asset) must fit `vocab_size`.
        seq_length: the signatures' sequence length; ConfigError past `max_position_embeddings`.
        labels: the class names in id order (classifier, tagger).
        max_answer_length, doc_stride, max_query_length, n_best_size: run_squad.py's options.
        version_2_with_negative, null_score_diff_threshold: SQuAD 2.0's no-answer rule.
        jit_compile: compile `serving_default` with XLA.

    Returns:
        `export_dir`.
    """
    model_type = task_model_type(model)
    if model_type is None:
        *others, last = [model_class.__name__ for model_class, _ in TASK_MODELS.values()]
        raise ValueError(
            f"export_task_model: cannot export a {type(model).__name__}; expected "
            f"{', '.join(others)} or {last}"
        )
    model.encoder.bert_config.check_seq_length(seq_length)
    model.encoder.bert_config.check_vocab_size(len(tokenizer.vocab), tokenizer.vocab_file)
    # say, only its encoder filled by `load_checkpoint`: the head has no variables yet
    if not model.built:
        model.build_with_dummy_inputs()
    if model_type == "classifier":
        module = ClassifierExport(model, tokenizer, seq_length, labels)
    elif model_type == "span":
        module = SpanExport(
            model,
            tokenizer,
            seq_length,
            max_answer_length,
            doc_stride,
            max_query_length,
            version_2_with_negative,
            null_score_diff_threshold,
            n_best_size,
        )
    elif model_type == "token":
        module = TokenClassifierExport(model, tokenizer, seq_length, labels)
    else:
        module = MultipleChoiceExport(model, tokenizer, seq_length)
    return save_atomically(
        module,
        export_dir,
        signatures=module.signatures(jit_compile),
        method_names=module.method_names(),
    )
