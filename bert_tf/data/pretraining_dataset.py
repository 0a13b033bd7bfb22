"""The tf.data input pipeline over pretraining TFRecord shards."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.cli_errors import tf_error_detail
from bert_tf.data import pretraining_features


OUT_OF_VOCAB_MESSAGE = "a token id in the input files is >= vocab_size"


class InputError(ValueError):
    """Input files that cannot be used, with the file and feature named."""


def check_record_lengths(path: str, max_seq_length: int, max_predictions_per_seq: int) -> None:
    """Reads the first record of `path` and checks each feature's length against the flags."""
    if tf.io.gfile.isdir(path):
        raise InputError(f"{path}: is a directory, not a TFRecord file")
    try:
        first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    except tf.errors.DataLossError as e:
        detail = tf_error_detail(e.message).replace(" (Is this even a TFRecord file?)", "")  # it says so
        raise InputError(f"{path}: not a valid TFRecord file ({detail})") from None
    if first is None:
        # A training pipeline whose shard holds only empty files would wait forever for a record.
        raise InputError(f"{path}: empty TFRecord file (more --num_output_shards than examples?); "
                         "leave it out of the input")
    try:
        example = tf.train.Example.FromString(first.numpy())
    except Exception:  # protobuf's DecodeError has no stable import path
        raise InputError(f"{path}: the first record is not a tf.train.Example") from None
    expected = pretraining_features.feature_lengths(max_seq_length, max_predictions_per_seq)
    for name, length in expected.items():
        if name not in example.features.feature:
            raise InputError(f"{path}: records lack the feature '{name}'")
        feature = example.features.feature[name]
        found = len(feature.int64_list.value) or len(feature.float_list.value)
        if found != length:
            flag = "max_predictions_per_seq" if name.startswith("masked_lm") else "max_seq_length"
            raise InputError(f"{path}: feature '{name}' has length {found}, but --{flag} "
                             f"makes it {length}")


def pretraining_dataset(files: list[str], batch_size: int, max_seq_length: int,
                        max_predictions_per_seq: int, vocab_size: int | None = None,
                        is_training: bool = True, input_context: tf.distribute.InputContext | None = None,
                        shuffle_buffer: int = 10_000, seed: int | None = None) -> tf.data.Dataset:
    """Batches of pretraining features from TFRecord files, with static shapes.

    For training: files are sharded per input pipeline (`input_context`), read
    with a parallel interleave, shuffled and repeated. `batch_size` is the batch
    of this pipeline: with `strategy.distribute_datasets_from_function`, pass
    `input_context.get_per_replica_batch_size(global_batch_size)`. Batches drop
    the remainder so every shape is static (TPU, XLA).

    Yields dicts of int32 features (float32 `masked_lm_weights`), as
    `pretraining_features.parse_examples` makes them. With `vocab_size`, a token
    id out of range fails with a clear error instead of a gather error deep in
    the model.
    """
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if input_context and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()
        dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=min(len(files), 8),
                                     num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None)
        dataset = dataset.shuffle(shuffle_buffer, seed=seed)
    else:
        dataset = tf.data.TFRecordDataset(dataset)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(
        lambda records: pretraining_features.parse_examples(records, max_seq_length, max_predictions_per_seq),
        num_parallel_calls=tf.data.AUTOTUNE)
    if vocab_size is not None:
        dataset = dataset.map(lambda features: _check_token_ids(features, vocab_size))
    return dataset.prefetch(tf.data.AUTOTUNE)


def _check_token_ids(features, vocab_size: int):
    ids = tf.concat([features["input_ids"], features["masked_lm_ids"]], axis=1)
    with tf.control_dependencies([tf.debugging.assert_less(
            ids, vocab_size, message=f"{OUT_OF_VOCAB_MESSAGE} ({vocab_size})")]):
        return {name: tf.identity(value) for name, value in features.items()}
