"""The tf.data input pipeline over pretraining TFRecord shards."""

from __future__ import annotations

import re

import tensorflow as tf

from bert_tf.data import pretraining_features
from bert_tf.errors import UserInputError

OUT_OF_VOCAB_MESSAGE = "a token id in the input files is >= vocab_size"


class InputError(UserInputError):
    """Input files that cannot be used, with the file and feature named."""


def check_record_lengths(
    path: str,
    max_seq_length: int,
    max_predictions_per_seq: int,
    next_sentence_prediction: bool = True,
) -> None:
    """Reads the first record of `path` and checks each feature's length against the flags, and
    its mode: records with `next_sentence_labels` are sentence pairs for next-sentence prediction,
    records without are packed text (create_pretraining_data.py's
    `--next_sentence_prediction=false`)."""
    if tf.io.gfile.isdir(path):
        raise InputError(f"{path}: is a directory, not a TFRecord file")
    try:
        first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    except tf.errors.DataLossError as e:
        # it says so
        detail = _tf_error_detail(e.message).replace(" (Is this even a TFRecord file?)", "")
        raise InputError(f"{path}: not a valid TFRecord file ({detail})") from None
    if first is None:
        # A training pipeline whose shard holds only empty files would wait forever for a record.
        raise InputError(
            f"{path}: empty TFRecord file (more `num_output_shards` than examples?); "
            "leave it out of the input"
        )
    try:
        example = tf.train.Example.FromString(first.numpy())
    except Exception:  # protobuf's DecodeError has no stable import path
        raise InputError(f"{path}: the first record is not a tf.train.Example") from None
    has_labels = "next_sentence_labels" in example.features.feature
    if has_labels != next_sentence_prediction:
        written, flag = ("with", "true") if has_labels else ("without", "false")
        raise InputError(
            f"{path}: written {written} next-sentence prediction "
            f"(create_pretraining_data.py `next_sentence_prediction`={flag});"
            f" train on it with `next_sentence_prediction`={flag}"
        )
    expected = pretraining_features.feature_lengths(
        max_seq_length, max_predictions_per_seq, next_sentence_prediction
    )
    for name, length in expected.items():
        if name not in example.features.feature:
            raise InputError(f"{path}: records lack the feature '{name}'")
        feature = example.features.feature[name]
        found = len(feature.int64_list.value) or len(feature.float_list.value)
        if found != length:
            raise InputError(f"{path}: {_length_mismatch(name, found, length)}")


def _length_mismatch(name: str, found: int, length: int) -> str:
    """Why a record's feature `name` of `found` values does not parse as `length` values."""
    flag = (
        "max_predictions_per_seq"
        if name in pretraining_features.PREDICTION_FEATURES
        else "max_seq_length"
    )
    return f"feature '{name}' has length {found}, but `{flag}` makes it {length}"


def read_pipeline_share(
    files: list[str], read, input_context: tf.distribute.InputContext | None
) -> tf.data.Dataset:
    """What this input pipeline reads of `files`, `read` mapping a dataset of file names to what is
    read from them (records, blocks of lines).

    With at least as many files as pipelines, each pipeline reads its own files; with fewer,
    every pipeline reads them all and keeps every n-th element read, so that none is left
    without input. The shares are disjoint when `read` reads in the same order in every
    pipeline (in file order, or shuffled with a seed).
    """
    file_names = tf.data.Dataset.from_tensor_slices(list(files))
    if input_context is None or input_context.num_input_pipelines == 1:
        return read(file_names)
    pipelines, pipeline = input_context.num_input_pipelines, input_context.input_pipeline_id
    if len(files) >= pipelines:
        return read(file_names.shard(pipelines, pipeline))
    return read(file_names).shard(pipelines, pipeline)


def pretraining_dataset(
    files: list[str],
    batch_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    vocab_size: int | None = None,
    is_training: bool = True,
    input_context: tf.distribute.InputContext | None = None,
    shuffle_buffer: int = 10_000,
    seed: int | None = None,
    next_sentence_prediction: bool = True,
) -> tf.data.Dataset:
    """Batches of pretraining features from TFRecord files, with static shapes.

    For training: files are sharded per input pipeline (`input_context`,
    `read_pipeline_share`), read with a parallel interleave, shuffled and
    repeated. `batch_size` is the global batch: with `input_context` (from
    `strategy.distribute_datasets_from_function`), each pipeline batches its
    per-replica share, as `dynamic_masking_dataset` does. Batches drop the
    remainder so every shape is static (TPU, XLA).

    Yields dicts of int32 features (float32 `masked_lm_weights`), as
    `pretraining_features.parse_examples` makes them (without `next_sentence_labels`
    when not `next_sentence_prediction`). With `vocab_size`, a token
    id out of range fails with a clear error instead of a gather error deep in
    the model.
    """

    def read(file_names: tf.data.Dataset) -> tf.data.Dataset:
        if not is_training:
            return tf.data.TFRecordDataset(file_names)
        return (
            file_names.shuffle(len(files), seed=seed)
            .repeat()
            .interleave(
                tf.data.TFRecordDataset,
                cycle_length=min(len(files), 8),
                num_parallel_calls=tf.data.AUTOTUNE,
                deterministic=seed is not None,
            )
        )

    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    dataset = read_pipeline_share(files, read, input_context)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(
        lambda records: pretraining_features.parse_examples(
            records, max_seq_length, max_predictions_per_seq, next_sentence_prediction
        ),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    if vocab_size is not None:
        dataset = dataset.map(lambda features: _check_token_ids(features, vocab_size))
    return dataset.prefetch(tf.data.AUTOTUNE)


def _check_token_ids(features, vocab_size: int):
    ids = tf.concat([features["input_ids"], features["masked_lm_ids"]], axis=1)
    with tf.control_dependencies(
        [
            tf.debugging.assert_less(
                ids, vocab_size, message=f"{OUT_OF_VOCAB_MESSAGE} ({vocab_size})"
            )
        ]
    ):
        return {name: tf.identity(value) for name, value in features.items()}


def input_errors_named(call, flag: str, files: str):
    """Returns `call()`, turning the tf.data failures of reading `files` (a corrupt record, a token
    id outside the vocab) into one-line `InputError`s that name `--flag`."""
    try:
        return call()
    except tf.errors.DataLossError as e:
        raise InputError(
            f"`{flag}`={files}: corrupt TFRecord ({_tf_error_detail(e.message)})"
        ) from None
    except tf.errors.InvalidArgumentError as e:
        out_of_vocab = re.search(re.escape(OUT_OF_VOCAB_MESSAGE) + r" \(\d+\)", e.message)
        if out_of_vocab:
            raise InputError(f"`{flag}`={files}: {out_of_vocab.group()}") from None
        # A record after the first (which `check_record_lengths`
        # read) of another length: ParseExample's words.
        length = re.search(
            r"Key: (\w+), Index: \d+\.\s+Number of \w+ values != expected\.\s+"
            r"Values size: (\d+) but output shape: \[(\d+)\]",
            e.message,
        )
        if length:
            name, found, expected = length.groups()
            raise InputError(
                f"`{flag}`={files}: a record's {_length_mismatch(name, found, expected)}"
            ) from None
        raise


def _tf_error_detail(message: str) -> str:
    """What a TensorFlow error message says went wrong ("corrupted record at 8352"), without
    the graph node, op and traceback around it."""
    lines = [line.strip() for line in message.splitlines()]
    detail = [
        line
        for line in lines
        if line
        and not line.startswith(("Graph execution error", "Detected at node", "File ", "[["))
    ]
    return re.sub(r"\{\{.*?\}\}|\[Op:.*", "", detail[-1] if detail else message).strip()
