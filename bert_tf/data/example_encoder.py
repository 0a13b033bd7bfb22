"""Batched `tf.train.Example` wire-format encoding of the pretraining schema, in numpy.

Building one proto per example from Python is too slow for the generator.
`encode_batch` writes the same bytes for a whole batch
with array operations: each example's bytes equal
`pretraining_features.to_example(values).SerializeToString(deterministic=True)`
byte for byte (features in sorted-name order, int64 lists packed as varints,
float lists as little-endian float32), so every TFRecord reader parses it.

Each example's message is laid out as the same columns of a `[batch, width]`
byte matrix with a keep mask (a varint takes its widest size, and its unused
bytes are not kept); one boolean compaction then gives every message's bytes,
one after the other.
"""

from __future__ import annotations

import functools

import numpy as np

from bert_tf.data import pretraining_features

# Wire-format tags: (field number << 3) | wire type 2 (length-delimited).
_TAG_1 = 0x0A  # Example.features, Features.feature entry, MapEntry.key, Int64List/FloatList.value
_TAG_MAP_VALUE = 0x12  # MapEntry.value (a Feature)
_TAG_FLOAT_LIST = 0x12  # Feature.float_list
_TAG_INT64_LIST = 0x1A  # Feature.int64_list


def _varint_groups(values: np.ndarray) -> np.ndarray:
    """Unsigned ints `[...]` -> their varints, zero-padded: uint8 `[..., width]`."""
    width = max(1, (int(values.max(initial=0)).bit_length() + 6) // 7)
    groups = np.empty(values.shape + (width,), np.uint8)
    for k in range(width):
        more = values >= (1 << (7 * (k + 1)))  # another byte follows
        groups[..., k] = ((values >> (7 * k)) & 0x7F).astype(np.uint8) | (more << 7).astype(
            np.uint8
        )
    return groups


_TABLE_SIZE = 1 << 17  # vocab ids (multilingual BERT has 119,547), positions, lengths


@functools.cache
def _varint_table() -> np.ndarray:
    """The varint of each value below `_TABLE_SIZE` (at most 3 bytes), zero-padded to a uint32."""
    words = np.zeros((_TABLE_SIZE, 4), np.uint8)
    words[:, :3] = _varint_groups(np.arange(_TABLE_SIZE, dtype=np.uint32))
    return words.view(np.uint32)[:, 0]


def _varint_bytes(values: np.ndarray, largest: int) -> np.ndarray:
    """Non-negative ints `[...]` (at most `largest`) ->
    their varints, zero-padded: uint8 `[..., width]`.

    Every byte of a varint is nonzero, but for the single byte of 0.
    """
    if largest < _TABLE_SIZE:  # Gathers of 4-byte words.
        return _varint_table()[values].view(np.uint8).reshape(values.shape + (4,))
    return _varint_groups(values.astype(np.uint64))


class _Message:
    """One message for every example of a batch, as column blocks of a `[batch, width]` byte matrix.

    A block is either bytes that every message has, or (bytes `[batch, width]`,
    their keep mask, or None when every byte is kept). `length` is each
    message's kept byte count `[batch]`.
    """

    def __init__(self, batch_size: int):
        self.blocks: list[bytes | tuple[np.ndarray, np.ndarray | None]] = []
        self.length = np.zeros(batch_size, np.int64)

    def _add(self, block: bytes | tuple[np.ndarray, np.ndarray | None]) -> None:
        """Appends a block; constant bytes join the constant bytes before them."""
        if isinstance(block, bytes) and self.blocks and isinstance(self.blocks[-1], bytes):
            self.blocks[-1] += block
        else:
            self.blocks.append(block)

    def constant(self, data: bytes) -> None:
        self._add(data)
        self.length += len(data)

    def fixed(self, data: np.ndarray) -> None:
        """Bytes `[batch, width]`, all kept."""
        self._add((data, None))
        self.length += data.shape[1]

    def varints(self, values: np.ndarray) -> None:
        """Non-negative ints `[batch, n]`, packed as varints."""
        if values.size and values.min() < 0:
            raise ValueError("encode_batch: negative int64 values are not supported")
        batch_size = len(values)
        largest = int(values.max(initial=0))
        if largest < 0x80:  # One byte per value: masks, segments, labels, short positions.
            self.fixed(values.astype(np.uint8))
            return
        groups = _varint_bytes(values, largest).reshape(batch_size, -1)
        keep = groups != 0
        keep[:, :: groups.shape[1] // values.shape[1]] = True  # a varint's first byte, even a 0
        used = keep.any(axis=0)
        # The same bytes in every message: nothing to drop.
        if np.array_equal(used, keep.all(axis=0)):
            self.fixed(groups[:, used])
        else:
            self._add((groups, keep))
            self.length += keep.sum(axis=1)

    def length_delimited(self, tag: bytes, body: "_Message") -> None:
        """`tag`, varint(length of `body`), then `body`."""
        lengths = body.length
        if len(lengths) and (lengths == lengths[0]).all():  # One length for all: constant bytes.
            self.constant(tag + _varint_groups(lengths[:1]).tobytes())
        else:
            self.constant(tag)
            self.varints(lengths[:, None])
        for block in body.blocks:
            self._add(block)
        self.length += body.length

    def join(self) -> tuple[np.ndarray, np.ndarray]:
        """(every message's bytes, one after the other, flat uint8; each one's length `[batch]`)."""
        blocks = [
            (np.broadcast_to(np.frombuffer(block, np.uint8), (len(self.length), len(block))), None)
            if isinstance(block, bytes)
            else block
            for block in self.blocks
        ]
        data = np.concatenate([block for block, _ in blocks], axis=1).reshape(-1)
        if all(keep is None for _, keep in blocks):
            return data, self.length
        keep = np.concatenate(
            [
                np.broadcast_to(True, block.shape) if keep is None else keep
                for block, keep in blocks
            ],
            axis=1,
        )
        return np.compress(keep.reshape(-1), data), self.length


def _feature_entry(name: str, values: np.ndarray) -> _Message:
    """One `Features.feature` map entry (key, then the Feature) for every example `[batch, n]`."""
    batch_size = values.shape[0]
    value_list = _Message(batch_size)  # Int64List / FloatList: one packed field
    payload = _Message(batch_size)
    if name in pretraining_features.FLOAT_FEATURES:
        payload.fixed(
            np.ascontiguousarray(values, dtype="<f4").view(np.uint8).reshape(batch_size, -1)
        )
        list_tag = _TAG_FLOAT_LIST
    else:
        payload.varints(values)
        list_tag = _TAG_INT64_LIST
    value_list.length_delimited(bytes([_TAG_1]), payload)
    feature = _Message(batch_size)
    feature.length_delimited(bytes([list_tag]), value_list)
    key = name.encode()
    entry = _Message(batch_size)
    entry.length_delimited(bytes([_TAG_1, len(key)]) + key + bytes([_TAG_MAP_VALUE]), feature)
    return entry


def encode_batch(values: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Serializes a batch of pretraining examples into one buffer.

    Args:
      values: every name of `pretraining_features.FEATURE_NAMES`, or all but
        `next_sentence_labels` -> array `[batch, length]` (ints >= 0, or floats for
        `FLOAT_FEATURES`), already padded.

    Returns:
      (data, lengths): the `batch` serialized `tf.train.Example`s one after the
      other, flat uint8, and each one's length `[batch]`. Each equals
      `to_example(...).SerializeToString(deterministic=True)` of its row.
    """
    names = pretraining_features.names_of(values)
    batch_size = len(values[names[0]])
    features = _Message(batch_size)  # Features: one map entry per feature, sorted by name
    for name in sorted(names):
        entry = _feature_entry(name, np.asarray(values[name]).reshape(batch_size, -1))
        features.length_delimited(bytes([_TAG_1]), entry)
    example = _Message(batch_size)
    example.length_delimited(bytes([_TAG_1]), features)
    return example.join()


def split_records(data: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    """(flat bytes, lengths), as `encode_batch` returns them -> one `bytes` per record."""
    ends = np.cumsum(lengths).tolist()
    buffer = data.tobytes()
    return [buffer[start:end] for start, end in zip([0] + ends[:-1], ends)]
