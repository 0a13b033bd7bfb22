"""The numpy wire-format encoder writes exactly what protobuf and TFRecord readers expect."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data import pretraining_features
from bert_tf.data.example_encoder import encode_batch, split_records

SEQ, PREDICTIONS = 12, 4


def encode_examples(values):
    """`encode_batch` as one `bytes` per example, as the generator writes them."""
    return split_records(*encode_batch(values))


def random_values(batch, rng, largest_id):
    """Feature arrays with ids of every varint width up to `largest_id`."""
    shifts = rng.integers(0, largest_id.bit_length(), (batch, SEQ))
    ids = rng.integers(0, largest_id, (batch, SEQ), endpoint=True) >> shifts
    ids[0, 0] = largest_id
    return {
        "input_ids": ids,
        "input_mask": rng.integers(0, 2, (batch, SEQ)),
        "segment_ids": rng.integers(0, 2, (batch, SEQ)),
        "masked_lm_positions": rng.integers(0, 300, (batch, PREDICTIONS)),
        "masked_lm_ids": rng.integers(0, largest_id + 1, (batch, PREDICTIONS)),
        "masked_lm_weights": rng.random((batch, PREDICTIONS)).astype(np.float32),
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)),
    }


@pytest.mark.parametrize("largest_id", [100, 30521, 119546, 2**40, 2**63 - 1])
def test_bytes_equal_deterministic_proto_serialization(largest_id):
    values = random_values(64, np.random.default_rng(largest_id % 1000), largest_id)
    encoded = encode_examples(values)
    for i in range(64):
        row = {name: values[name][i].tolist() for name in pretraining_features.FEATURE_NAMES}
        assert encoded[i] == pretraining_features.to_example(row).SerializeToString(
            deterministic=True
        )


def test_parse_example_reads_the_bytes():
    values = random_values(32, np.random.default_rng(1), 30521)
    parsed = pretraining_features.parse_examples(
        tf.constant(encode_examples(values)), SEQ, PREDICTIONS
    )
    for name in pretraining_features.FEATURE_NAMES:
        np.testing.assert_array_equal(
            parsed[name].numpy(),
            values[name].reshape(32, -1).squeeze(-1)
            if name == "next_sentence_labels"
            else values[name],
        )


def test_tfrecord_round_trip(tmp_path):
    values = random_values(16, np.random.default_rng(2), 30521)
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in encode_examples(values):
            writer.write(record)
    batch = next(
        iter(
            tf.data.TFRecordDataset(path)
            .batch(16)
            .map(lambda s: pretraining_features.parse_examples(s, SEQ, PREDICTIONS))
        )
    )
    np.testing.assert_array_equal(batch["input_ids"].numpy(), values["input_ids"])


def test_negative_ints_are_refused():
    values = random_values(2, np.random.default_rng(3), 100)
    values["input_ids"][0, 0] = -1
    with pytest.raises(ValueError, match="^encode_batch: negative int64 values are not supported$"):
        encode_batch(values)
