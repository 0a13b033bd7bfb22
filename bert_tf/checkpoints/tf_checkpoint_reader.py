"""Reading TensorFlow checkpoints, name-based (TF1) or object-based (TF2), with one-line errors."""

from __future__ import annotations

import collections

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.checkpoints.checkpoint_weights import CheckpointError

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def open_reader(prefix: str) -> tf.train.CheckpointReader:
    """Opens the checkpoint `prefix` (its `.index` file must exist)."""
    try:
        # Not tf.train.load_checkpoint: it takes `prefix` for a directory where the file system says
        # so, as ram:// does for any prefix of a file's name.
        return tf.compat.v1.train.NewCheckpointReader(prefix)
    except tf.errors.OpError as e:
        raise CheckpointError(
            f"{prefix}: cannot read the checkpoint index "
            f"(truncated or not a checkpoint: {e.message.splitlines()[0]})"
        ) from None


def read_tensor(reader: tf.train.CheckpointReader, prefix: str, key: str) -> np.ndarray:
    """One tensor; a truncated or corrupt data file names the variable."""
    try:
        return reader.get_tensor(key)
    except (tf.errors.OpError, IndexError, ValueError) as e:
        detail = e.message if isinstance(e, tf.errors.OpError) else str(e)
        raise CheckpointError(
            f"{prefix}: cannot read variable {key} "
            f"(data file truncated or corrupt: {detail.splitlines()[0]})"
        ) from None


class ObjectGraph:
    """The object graph of a TF2 checkpoint: nodes, their named children and variable keys.

    Node 0 is the root `tf.train.Checkpoint`; `child(0, "encoder/_pooler_layer")` walks
    named children the way `tf.train.Checkpoint.restore` matches attributes.
    """

    def __init__(self, reader: tf.train.CheckpointReader):
        self.proto = trackable_object_graph_pb2.TrackableObjectGraph()
        self.proto.ParseFromString(reader.get_tensor(OBJECT_GRAPH_KEY))

    @staticmethod
    def present(reader: tf.train.CheckpointReader) -> bool:
        """True for an object-based (TF2) checkpoint."""
        return reader.has_tensor(OBJECT_GRAPH_KEY)

    def children(self, node: int) -> dict[str, int]:
        return {child.local_name: child.node_id for child in self.proto.nodes[node].children}

    def child(self, node: int, path: str) -> int | None:
        """The node at `path` ("a/b/c") below `node`, or None."""
        for name in path.split("/"):
            node = self.children(node).get(name)
            if node is None:
                return None
        return node

    def variable_key(self, node: int) -> str | None:
        """The checkpoint key of a variable node, None for other nodes."""
        for attribute in self.proto.nodes[node].attributes:
            if attribute.name == "VARIABLE_VALUE":
                return attribute.checkpoint_key
        return None

    def variable_paths(self, path: str = "") -> dict[str, str]:
        """Checkpoint key -> object path ("model/encoder/pooler/bias") of each variable at or
        below `path`: the first path that reaches it, breadth-first."""
        start = self.child(0, path) if path else 0
        found, seen, queue = {}, {start}, collections.deque([(start, path)])
        while queue:
            node, node_path = queue.popleft()
            key = self.variable_key(node)
            if key is not None:
                found[key] = node_path
            for name, child in self.children(node).items():
                if child not in seen:
                    seen.add(child)
                    queue.append((child, f"{node_path}/{name}" if node_path else name))
        return found


def encoder_paths(graph: ObjectGraph) -> tuple[str, str] | None:
    """`(part, encoder)` object paths of a BERT model in a TF2 checkpoint, or None.

    The part is the root's `model` child, else its `encoder` child (pretraining saves
    both, `model` holding the heads too); the encoder is the part itself or, for a
    pretrainer or task model, the part's `encoder` child (`encoder_network` in Model
    Garden's pretrainers and task models).
    """
    for part in ("model", "encoder"):
        node = graph.child(0, part)
        if node is not None:
            inner = [
                name for name in ("encoder", "encoder_network") if name in graph.children(node)
            ]
            return part, f"{part}/{inner[0]}" if inner else part
    return None


def unread_variables(graph: ObjectGraph, read: set[str], part: str, encoder: str):
    """`(unexpected, unused, skipped)` object paths of the variables not in `read`.

    Unexpected ones lie in the encoder, unused ones elsewhere in the model part, and the
    rest (optimizer, step counters) is skipped.
    """
    in_encoder, in_part = graph.variable_paths(encoder), graph.variable_paths(part)
    unexpected = sorted(path for key, path in in_encoder.items() if key not in read)
    unused = sorted(
        path for key, path in in_part.items() if key not in read and key not in in_encoder
    )
    skipped = sorted(path for key, path in graph.variable_paths().items() if key not in in_part)
    return unexpected, unused, skipped
