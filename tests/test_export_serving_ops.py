"""Every op type of every export kind, against the ops that stock TF Serving releases have.

Stock TF Serving links core TensorFlow and tensorflow-text's `ops_lib`: releases 2.12 to
2.19 pin tensorflow-text 2.12.1, release 2.20 pins 2.20.0. The tensorflow-text op lists,
and the core ops of TensorFlow 2.12.1 (TF Serving 2.12's), are fixtures written by
tests/fixtures/tf_serving_ops/derive_op_lists.py; TF Serving 2.20's core ops are the
running TensorFlow's (2.20). TF Serving loads a SavedModel's function bodies only when a
signature runs them, so each signature needs the ops it reaches plus those that loading
runs (restoring the variables, the init op).
"""

import glob
import os
import pathlib

import pytest
import tensorflow as tf
import tensorflow_text
from tensorflow.core.framework import op_def_pb2
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.client import pywrap_tf_session as c_api

from bert_test_utils import tiny_encoder, write_word_vocab
from bert_tf.export import export_hub_pair, export_task_model
from bert_tf.models import (
    BertClassifier,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.tokenization import BertTokenizer

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "tf_serving_ops"
RELEASES = ("2.12", "2.20")  # the stock TF Serving releases checked, oldest first
LOAD = "(loading)"  # what loading the SavedModel runs: restoring its variables, its init op

# Export kind -> signature -> the oldest stock TF Serving release that serves it. The doc's table.
EXPECTED = {
    "classifier": {
        "serving_default": "2.12",
        "text": "2.12",
        "text_pair": "2.12",
        "serve_examples": "2.12",
        "serve_text_examples": "2.12",
    },
    "span": {"serving_default": "2.12", "text": "2.12"},
    "token": {"serving_default": "2.12", "text": "2.12"},
    "multiple choice": {"serving_default": "2.12", "text": "2.12"},
    "hub preprocessing": {"serving_default": "2.12"},
    "hub encoder": {"serving_default": "2.12"},
}


def fixture_ops(name: str) -> set[str]:
    return {
        line
        for line in (FIXTURES / name).read_text().splitlines()
        if line and not line.startswith("#")
    }


def library_ops(path: str) -> set[str]:
    """The ops that the op library at `path` registers (it may be loaded already)."""
    handle = c_api.TF_LoadLibrary(path)
    try:
        return {op.name for op in op_def_pb2.OpList.FromString(c_api.TF_GetOpList(handle)).op}
    finally:
        c_api.TF_DeleteLibraryHandle(handle)


def running_core_ops() -> set[str]:
    """The ops this process registers, less those of the installed tensorflow-text's libraries."""
    buffer = c_api.TF_GetAllOpList()
    try:
        registered = {op.name for op in op_def_pb2.OpList.FromString(c_api.TF_GetBuffer(buffer)).op}
    finally:
        c_api.TF_DeleteBuffer(buffer)
    text_libraries = glob.glob(
        os.path.join(os.path.dirname(tensorflow_text.__file__), "python", "**", "_*.so"),
        recursive=True,
    )
    return registered - set().union(*map(library_ops, text_libraries))


def signature_ops(export_dir) -> dict[str, set[str]]:
    """Signature name (and `LOAD`) -> the op types it runs: the graph nodes its outputs depend on
    and every node of every function they call, transitively."""
    meta_graph = saved_model_pb2.SavedModel.FromString(
        (pathlib.Path(export_dir) / "saved_model.pb").read_bytes()
    ).meta_graphs[0]
    nodes = {node.name: node for node in meta_graph.graph_def.node}
    functions = {
        function.signature.name: function for function in meta_graph.graph_def.library.function
    }

    def reached(tensor_names) -> set[str]:
        ops, seen, pending = set(), set(), [name.lstrip("^").split(":")[0] for name in tensor_names]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in nodes:  # a graph node: follow its inputs too
                node = nodes[name]
                pending += [i.lstrip("^").split(":")[0] for i in node.input]
                body = [node]
            else:  # a function: all of its body is instantiated
                body = functions[name].node_def
            for node in body:
                if node.op in functions:
                    pending.append(node.op)
                else:
                    ops.add(node.op)
                for value in node.attr.values():
                    pending += [value.func.name] if value.HasField("func") else []
                    pending += [f.name for f in value.list.func]
        return ops

    found = {
        name: reached(output.name for output in signature.outputs.values())
        for name, signature in meta_graph.signature_def.items()
        if name != "__saved_model_init_op"
    }
    found[LOAD] = reached(
        [
            meta_graph.saver_def.restore_op_name,
            *(
                output.name
                for output in meta_graph.signature_def["__saved_model_init_op"].outputs.values()
            ),
        ]
    )
    return found


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, str]:
    """Export kind -> a tiny export of it."""
    directory = tmp_path_factory.mktemp("exports")
    tokenizer = BertTokenizer(
        write_word_vocab(directory / "vocab.txt", ["who wrote the book ?", "Ann did ."])
    )
    paths = {}
    for kind, model in (
        (
            "classifier",
            BertClassifier(tiny_encoder(vocab_size=tokenizer.vocab_size), num_classes=2),
        ),
        ("span", BertSpanLabeler(tiny_encoder(vocab_size=tokenizer.vocab_size))),
        (
            "token",
            BertTokenClassifier(tiny_encoder(vocab_size=tokenizer.vocab_size), num_classes=3),
        ),
        ("multiple choice", BertMultipleChoice(tiny_encoder(vocab_size=tokenizer.vocab_size))),
    ):
        paths[kind] = export_task_model(
            model,
            directory / kind.replace(" ", "_"),
            tokenizer=tokenizer,
            seq_length=16,
            max_query_length=8,
        )
    hub = export_hub_pair(
        BertPretrainer(tiny_encoder(vocab_size=tokenizer.vocab_size)),
        directory / "hub",
        tokenizer=tokenizer,
        seq_length=16,
    )
    paths["hub preprocessing"], paths["hub encoder"] = hub["preprocessing"], hub["encoder"]
    return paths


def test_fixtures_hold_the_ops_tf_serving_links():
    text_2_12, text_2_20 = (
        fixture_ops("tensorflow_text-2.12.1.txt"),
        fixture_ops("tensorflow_text-2.20.0.txt"),
    )
    assert {
        "FastWordpieceTokenizeWithOffsets",
        "FastBertNormalize",
        "RegexSplitWithOffsets",
    } <= text_2_12
    assert "TFText>RoundRobinTrim" in text_2_20 - text_2_12  # tensorflow/serving#2267
    assert {"MatMul", "ParseExampleV2", "StatefulPartitionedCall"} <= fixture_ops(
        "tensorflow-2.12.1.txt"
    )


def available_ops() -> dict[str, set[str]]:
    """Stock TF Serving release -> the op types it has."""
    return {
        "2.12": fixture_ops("tensorflow-2.12.1.txt") | fixture_ops("tensorflow_text-2.12.1.txt"),
        "2.20": running_core_ops() | fixture_ops("tensorflow_text-2.20.0.txt"),
    }


def oldest_release(
    needed: set[str], available: dict[str, set[str]]
) -> tuple[str, dict[str, list[str]]]:
    """The oldest release with all of `needed` ("none" if none has), and what each one lacks."""
    missing = {release: sorted(needed - available[release]) for release in RELEASES}
    return next((release for release in RELEASES if not missing[release]), "none"), missing


def test_a_signature_on_newer_ops_needs_a_newer_release(tmp_path):
    """tensorflow-text's RoundRobinTrimmer, in a function the signature calls, needs 2.20."""
    module = tf.Module()
    module.trim = tf.function(
        lambda ids: tensorflow_text.RoundRobinTrimmer(4).trim([ids, ids])[0].to_tensor(),
        input_signature=[tf.RaggedTensorSpec([None, None], tf.int32)],
    )
    tf.saved_model.save(
        module, str(tmp_path), signatures={"trim": module.trim.get_concrete_function()}
    )
    ops = signature_ops(tmp_path)
    release, missing = oldest_release(ops["trim"] | ops[LOAD], available_ops())
    assert release == "2.20" and "TFText>RoundRobinTrim" in missing["2.12"], missing
    assert {"StatefulPartitionedCall", "RaggedTensorToTensor"} <= ops["trim"]


def test_every_export_runs_on_stock_tf_serving(exports):
    """Each signature of each export kind: its ops are all in a stock TF Serving release, and the
    oldest such release is the documented one (`EXPECTED`)."""
    available = available_ops()
    text_ops = fixture_ops("tensorflow_text-2.12.1.txt") | fixture_ops("tensorflow_text-2.20.0.txt")
    oldest, report = {}, []
    for kind, path in exports.items():
        ops = signature_ops(path)
        load = ops.pop(LOAD)
        assert load <= available[RELEASES[0]], (
            f"{kind}: loading needs {sorted(load - available[RELEASES[0]])}"
        )
        for signature, needed in sorted(ops.items()):
            needed |= load
            oldest.setdefault(kind, {})[signature], missing = oldest_release(needed, available)
            report.append(
                f"{kind:18} {signature:20} TF Serving >= {oldest[kind][signature]:5}"
                f" tensorflow-text ops: {', '.join(sorted(needed & text_ops)) or '-'}"
                + "".join(f"; missing from {r}: {', '.join(m)}" for r, m in missing.items() if m)
            )
    print("\n".join(report))
    assert oldest == EXPECTED, "\n".join(report)
