"""BertClassifier export: ids, text, tf.Example signatures, fresh-process load, saved_model_cli."""

import json
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import fingerprint_pb2, saved_model_pb2
from tensorflow.python.saved_model.pywrap_saved_model import fingerprinting as fingerprinting_pywrap

from bert_test_utils import (
    random_encoder_inputs,
    run_without_bert_tf,
    tiny_encoder,
    write_word_vocab,
)
from bert_tf.export import export_task_model, with_weights_in
from bert_tf.models import BertClassifier, BertEncoder, BertPretrainer
from bert_tf.tokenization import BertTokenizer

TEXTS = [
    "the movie was great",
    "a dull and boring film",
    "great acting , weak plot",
    "Café crème brûlée!",
]
LABELS = ["negative", "neutral", "positive"]
SEQ_LENGTH = 16


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("classifier")
    tokenizer = BertTokenizer(write_word_vocab(directory / "vocab.txt", TEXTS))
    # Seeded, and initialised wide enough that an untrained model tells its rows apart by far
    # more than the 1e-5 the signatures are compared at (at 0.02 they differ by ~5e-5).
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder(vocab_size=tokenizer.vocab_size, initializer_range=0.5)
    model = BertClassifier(encoder, num_classes=3)
    model.build_with_dummy_inputs()
    path = export_task_model(
        model, directory / "export", tokenizer=tokenizer, seq_length=SEQ_LENGTH, labels=LABELS
    )
    return model, tokenizer, path, tf.saved_model.load(path)


class CountingTokenizer(BertTokenizer):
    """Counts the calls of `tokenize`: tracing a graph calls it, running one does not."""

    calls = 0

    def tokenize(self, texts):
        self.calls += 1
        return super().tokenize(texts)


class CountingClassifier(BertClassifier):
    """Counts the calls of `call` (as `CountingTokenizer`)."""

    calls = 0

    def call(self, inputs, training=False):
        self.calls += 1
        return super().call(inputs, training=training)


def reference(model, tokenizer, *texts):
    """Our tokenizer, packed to the batch's longest row, through the in-memory model."""
    segments = [tokenizer.tokenize(tf.constant(t)) for t in texts]
    length = (
        max(int(tf.reduce_max(s.row_lengths())) if s.nrows() else 0 for s in segments)
        + len(texts)
        + 1
    )
    inputs = tokenizer.pack_inputs(segments, min(length, SEQ_LENGTH))
    return tf.nn.softmax(model(inputs)["logits"]).numpy(), inputs


def test_serving_default_equals_the_model(exported):
    model, _, _, loaded = exported
    inputs = random_encoder_inputs(5, SEQ_LENGTH, model.encoder.vocab_size, seed=3)
    outputs = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    logits = model(inputs)["logits"].numpy()
    np.testing.assert_allclose(outputs["logits"], logits, atol=1e-5)
    np.testing.assert_allclose(outputs["probabilities"], tf.nn.softmax(logits), atol=1e-5)


def test_text_signatures_equal_tokenizer_then_serving(exported):
    model, tokenizer, _, loaded = exported
    texts = tf.constant(TEXTS)
    outputs = loaded.signatures["text"](text_a=texts)
    expected, _ = reference(model, tokenizer, TEXTS)
    np.testing.assert_allclose(outputs["probabilities"], expected, atol=1e-5)
    assert outputs["label"].numpy().tolist() == [LABELS[i].encode() for i in expected.argmax(-1)]

    pair = loaded.signatures["text_pair"](text_a=texts, text_b=tf.constant(TEXTS[::-1]))
    expected, _ = reference(model, tokenizer, TEXTS, TEXTS[::-1])
    np.testing.assert_allclose(pair["probabilities"], expected, atol=1e-5)


def test_text_pads_only_to_the_batch_length_and_truncates_long_text(exported):
    model, tokenizer, _, loaded = exported
    long_text = " ".join(TEXTS * 5)  # far past SEQ_LENGTH tokens
    for texts in (["great"], ["", "great"], [long_text, ""]):
        expected, inputs = reference(model, tokenizer, texts)
        assert inputs["input_word_ids"].shape[1] == (SEQ_LENGTH if long_text in texts else 3)
        np.testing.assert_allclose(
            loaded.signatures["text"](text_a=tf.constant(texts))["probabilities"],
            expected,
            atol=1e-5,
        )


def test_batches_of_1_and_64(exported):
    model, tokenizer, _, loaded = exported
    singles = [
        loaded.signatures["text"](text_a=tf.constant([t]))["probabilities"][0] for t in TEXTS
    ]
    assert np.abs(singles[0] - singles[1]).max() > 1e-2  # rows are told apart
    for batch in (1, 64):
        texts = [TEXTS[i % len(TEXTS)] for i in range(batch)]
        outputs = loaded.signatures["text"](text_a=tf.constant(texts))
        assert outputs["probabilities"].shape == (batch, 3) and outputs["label"].shape == (batch,)
        # Each row is its text alone, and the in-memory model on the same batch.
        np.testing.assert_allclose(
            outputs["probabilities"], [singles[i % len(TEXTS)] for i in range(batch)], atol=1e-5
        )
        np.testing.assert_allclose(
            outputs["probabilities"], reference(model, tokenizer, texts)[0], atol=1e-5
        )


def test_batch_of_0(exported):
    _, _, _, loaded = exported
    empty = tf.constant([], tf.string)
    for outputs in (
        loaded.signatures["text"](text_a=empty),
        loaded.signatures["text_pair"](text_a=empty, text_b=empty),
    ):
        assert (
            outputs["probabilities"].shape == (0, 3)
            and outputs["probabilities"].dtype == tf.float32
        )
        assert outputs["label"].shape == (0,) and outputs["label"].dtype == tf.string
    examples = loaded.signatures["serve_text_examples"](inputs=empty)
    assert examples["scores"].shape == examples["classes"].shape == (0, 3)


@pytest.mark.parametrize("batch_a, batch_b", [(2, 1), (1, 3), (2, 3)])
def test_text_pair_of_unequal_batches_is_refused(exported, batch_a, batch_b):
    _, _, _, loaded = exported
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="text_a and text_b must have the same batch size"
    ):
        loaded.signatures["text_pair"](
            text_a=tf.constant(TEXTS[:batch_a]), text_b=tf.constant(TEXTS[:batch_b])
        )


def test_wrong_dtype_and_missing_input_are_refused_by_the_signature(exported):
    _, _, _, loaded = exported
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a string tensor"):
        loaded.signatures["text"](text_a=tf.constant([1, 2]))
    with pytest.raises(TypeError):
        loaded.signatures["text_pair"](text_a=tf.constant(["only one"]))


def test_unsupported_model_is_a_one_line_value_error(exported, tmp_path):
    _, tokenizer, _, _ = exported
    with pytest.raises(ValueError, match="cannot export a BertPretrainer"):
        export_task_model(
            BertPretrainer(tiny_encoder(vocab_size=tokenizer.vocab_size)),
            tmp_path,
            tokenizer=tokenizer,
            seq_length=SEQ_LENGTH,
        )


def test_labels_unlike_the_classes_are_a_one_line_value_error(exported, tmp_path):
    model, tokenizer, _, _ = exported
    with pytest.raises(ValueError, match=r"^`labels`: 2 given for a classifier with 3 classes$"):
        export_task_model(
            model, tmp_path, tokenizer=tokenizer, seq_length=SEQ_LENGTH, labels=LABELS[:2]
        )
    with pytest.raises(ValueError, match=r"^`labels`: a,b,a names a class twice$"):
        export_task_model(
            model, tmp_path, tokenizer=tokenizer, seq_length=SEQ_LENGTH, labels=["a", "b", "a"]
        )


def test_fresh_process_without_bert_tf(exported, tmp_path):
    model, tokenizer, path, _ = exported
    inputs = random_encoder_inputs(2, 8, tokenizer.vocab_size, seed=5)
    stdout = run_without_bert_tf(
        f"""
        import json
        loaded = tf.saved_model.load({str(path)!r})
        values = {json.dumps({k: v.tolist() for k, v in inputs.items()})}
        ids = {{k: tf.constant(v, tf.int32) for k, v in values.items()}}
        text = loaded.signatures["text"](text_a=tf.constant({TEXTS!r}))
        logits = loaded.signatures["serving_default"](**ids)["logits"]
        print(json.dumps({{"logits": logits.numpy().tolist(),
                          "probabilities": text["probabilities"].numpy().tolist()}}))
    """,
        tmp_path,
    )
    got = json.loads(stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=1e-5)
    np.testing.assert_allclose(
        got["probabilities"], reference(model, tokenizer, TEXTS)[0], atol=1e-5
    )


def test_saved_model_cli_runs_serving_default(exported, tmp_path):
    model, tokenizer, path, _ = exported
    # Stock saved_model_cli, without the TF Text ops the text signatures use: serving_default
    # needs none, and the others are only looked up when they run (the README's command).
    cli = [
        sys.executable,
        "-c",
        "import sys; from tensorflow.python.tools import saved_model_cli; "
        "sys.argv[0] = 'saved_model_cli'; saved_model_cli.main()",
    ]
    inputs = random_encoder_inputs(2, 8, tokenizer.vocab_size, seed=7)
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
    result = subprocess.run(
        [
            *cli,
            "run",
            "--dir",
            str(path),
            "--tag_set",
            "serve",
            "--signature_def",
            "serving_default",
            "--inputs",
            ";".join(f"{name}={tmp_path / name}.npy" for name in inputs),
            "--outdir",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    np.testing.assert_allclose(
        np.load(tmp_path / "out" / "logits.npy"), model(inputs)["logits"], atol=1e-5
    )


def test_jit_compiled_serving_default_equals_the_model(tmp_path):
    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", TEXTS))
    model = BertClassifier(tiny_encoder(vocab_size=tokenizer.vocab_size), num_classes=3)
    model.build_with_dummy_inputs()
    path = export_task_model(
        model,
        tmp_path / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
        labels=LABELS,
        jit_compile=True,
    )
    serving = tf.saved_model.load(path).signatures["serving_default"]
    compiled = [
        f.signature.name
        for f in serving.graph.as_graph_def().library.function
        if f.attr["_XlaMustCompile"].b
    ]
    assert compiled, "serving_default is not XLA-compiled"
    inputs = random_encoder_inputs(3, SEQ_LENGTH, model.encoder.vocab_size, seed=4)
    outputs = serving(**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(outputs["logits"], model(inputs)["logits"], atol=1e-5)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_weights_stored_in_half_precision_compute_what_mixed_precision_does(tmp_path, dtype):
    tokenizer = BertTokenizer(write_word_vocab(tmp_path / "vocab.txt", TEXTS))
    keras.utils.set_random_seed(0)
    model = BertClassifier(tiny_encoder(vocab_size=tokenizer.vocab_size), num_classes=3)
    model.build_with_dummy_inputs()
    path = export_task_model(
        with_weights_in(model, dtype),
        tmp_path / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
        labels=LABELS,
    )
    loaded = tf.saved_model.load(path)
    # Every weight is stored in `dtype` but LayerNorm's, which runs in float32.
    stored = {v.name: v.dtype.name for v in loaded.model_variables if v.dtype.is_floating}
    assert len(stored) == len(model.weights)
    assert {name for name, kind in stored.items() if kind != dtype} == {
        name for name in stored if "layer_norm" in name
    }, stored
    assert {stored[name] for name in stored if "layer_norm" in name} == {"float32"}

    # The same computation as the mixed-precision model's
    # export, which casts float32 weights on every call.
    mixed = BertClassifier(
        BertEncoder(**{**model.encoder.get_config(), "dtype": f"mixed_{dtype}"}), num_classes=3
    )
    mixed.build_with_dummy_inputs()
    mixed.set_weights(model.get_weights())
    mixed_export = tf.saved_model.load(
        export_task_model(
            mixed, tmp_path / "mixed", tokenizer=tokenizer, seq_length=SEQ_LENGTH, labels=LABELS
        )
    )
    inputs = {
        k: tf.constant(v)
        for k, v in random_encoder_inputs(3, SEQ_LENGTH, model.encoder.vocab_size).items()
    }
    logits = loaded.signatures["serving_default"](**inputs)["logits"]
    np.testing.assert_array_equal(
        logits, mixed_export.signatures["serving_default"](**inputs)["logits"]
    )
    np.testing.assert_allclose(
        logits, model(inputs)["logits"], atol={"bfloat16": 2e-3, "float16": 2e-4}[dtype]
    )
    assert with_weights_in(model, "float32") is model
    with pytest.raises(
        ValueError, match="^`dtype`='float64': expected one of float32, bfloat16, float16$"
    ):
        with_weights_in(model, "float64")


@pytest.mark.parametrize("jit_compile", [False, True])
def test_bad_ids_are_refused_by_name_with_xla_too(exported, tmp_path, jit_compile):
    # Unchecked, Keras's `take` wraps -1 around and XLA's gather clamps the others: no error.
    # Unequal shapes failed inside the attention, with no input named.
    model, tokenizer, _, _ = exported
    path = export_task_model(
        model,
        tmp_path / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
        jit_compile=jit_compile,
    )
    serving = tf.saved_model.load(path).signatures["serving_default"]
    ids = {
        name: tf.constant(v)
        for name, v in random_encoder_inputs(2, 8, tokenizer.vocab_size).items()
    }
    serving(**ids)
    bad_ids = [
        ("input_word_ids", -1, "input_word_ids must be >= 0"),  # (input, value, the error)
        ("input_word_ids", tokenizer.vocab_size, "input_word_ids must be < the vocab size"),
        ("input_type_ids", 2, "input_type_ids must be < type_vocab_size, 2"),
    ]
    for name, value, message in bad_ids:
        bad = tf.tensor_scatter_nd_update(ids[name], [[1, 3]], [value])
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            serving(**{**ids, name: bad})
    too_long = {
        name: tf.zeros([1, model.encoder.bert_config.max_position_embeddings + 1], tf.int32)
        for name in ids
    }
    with pytest.raises(tf.errors.InvalidArgumentError, match="at most max_position_embeddings"):
        serving(**too_long)
    # failed in a GatherV2, no input named
    empty = {name: tf.zeros([2, 0], tf.int32) for name in ids}
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="input_word_ids must have a sequence length of at least 1",
    ):
        serving(**empty)
    unequal = {"input_mask": ids["input_mask"][:, :-1], "input_type_ids": ids["input_type_ids"][:1]}
    for name, value in unequal.items():  # a token short; a row short
        with pytest.raises(
            tf.errors.InvalidArgumentError, match=f"{name} must have the shape of input_word_ids"
        ):
            serving(**{**ids, name: value})


def test_serving_default_has_only_onnx_convertible_math(exported):
    # tf2onnx has no Erfc: the exact GELU must be written with Erf (google-research/bert's form).
    _, _, _, loaded = exported
    graph = loaded.signatures["serving_default"].graph.as_graph_def()
    ops = {node.op for f in graph.library.function for node in f.node_def} | {
        n.op for n in graph.node
    }
    assert "Erf" in ops and "Erfc" not in ops


def test_the_tokenizer_and_the_model_are_traced_once_for_all_signatures(tmp_path):
    """`text` and `text_pair` tokenize three texts, and they and `serving_default` run the model:
    one trace of each (tracing them is most of an export's time)."""
    tokenizer = CountingTokenizer(write_word_vocab(tmp_path / "vocab.txt", TEXTS))
    model = CountingClassifier(tiny_encoder(vocab_size=tokenizer.vocab_size), num_classes=3)
    model.build_with_dummy_inputs()
    model.calls = 0
    loaded = tf.saved_model.load(
        export_task_model(model, tmp_path / "export", tokenizer=tokenizer, seq_length=SEQ_LENGTH)
    )
    assert (tokenizer.calls, model.calls) == (1, 1)
    expected, _ = reference(model, tokenizer, TEXTS, TEXTS)
    np.testing.assert_allclose(
        loaded.signatures["text_pair"](text_a=tf.constant(TEXTS), text_b=tf.constant(TEXTS))[
            "probabilities"
        ],
        expected,
        atol=1e-5,
    )


def serialized_examples(rows) -> tf.Tensor:
    """Serialized `tf.Example`s, one a row: feature name -> a list of ints or of strings."""

    def feature(values):
        if isinstance(values[0], str):
            return tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[v.encode() for v in values])
            )
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    return tf.constant(
        [
            tf.train.Example(
                features=tf.train.Features(
                    feature={name: feature(values) for name, values in row.items()}
                )
            ).SerializeToString()
            for row in rows
        ]
    )


def id_examples(inputs) -> tf.Tensor:
    """Each row of the padded `inputs` as a tf.Example of its real tokens alone (no padding)."""
    lengths = inputs["input_mask"].sum(axis=1)
    return serialized_examples(
        [
            {name: inputs[name][row, :length].tolist() for name in inputs}
            for row, length in enumerate(lengths)
        ]
    )


@pytest.fixture(scope="module")
def regression_export(exported, tmp_path_factory):
    _, tokenizer, _, _ = exported
    keras.utils.set_random_seed(1)
    model = BertClassifier(
        tiny_encoder(vocab_size=tokenizer.vocab_size, initializer_range=0.5), num_classes=1
    )
    model.build_with_dummy_inputs()
    return export_task_model(
        model,
        tmp_path_factory.mktemp("regression") / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
    )


def signature_defs(path) -> dict:
    saved_model = saved_model_pb2.SavedModel.FromString((path / "saved_model.pb").read_bytes())
    return dict(saved_model.meta_graphs[0].signature_def)


def test_example_signatures_are_marked_for_classify_and_regress(exported, regression_export):
    _, _, path, _ = exported
    expected = {
        "classifier": ("tensorflow/serving/classify", {"classes": tf.string, "scores": tf.float32}),
        "regression": ("tensorflow/serving/regress", {"outputs": tf.float32}),
    }
    for kind, export_dir in (("classifier", path), ("regression", regression_export)):
        defs = signature_defs(pathlib.Path(export_dir))
        method_name, outputs = expected[kind]
        for name in ("serve_examples", "serve_text_examples"):
            assert defs[name].method_name == method_name
            assert {k: v.dtype for k, v in defs[name].inputs.items()} == {
                "inputs": tf.string.as_datatype_enum
            }
            assert {k: v.dtype for k, v in defs[name].outputs.items()} == {
                k: dtype.as_datatype_enum for k, dtype in outputs.items()
            }
        others = set(defs) - {"serve_examples", "serve_text_examples", "__saved_model_init_op"}
        assert others == {"serving_default", "text", "text_pair"}
        assert {defs[name].method_name for name in others} == {"tensorflow/serving/predict"}
        # The fingerprint was written again after the change: it hashes the saved_model.pb there.
        written = fingerprint_pb2.FingerprintDef.FromString(
            (pathlib.Path(export_dir) / "fingerprint.pb").read_bytes()
        )
        fresh = fingerprint_pb2.FingerprintDef.FromString(
            fingerprinting_pywrap.CreateFingerprintDef(str(export_dir))
        )
        written.ClearField("uuid"), fresh.ClearField("uuid")  # random on each write
        assert written == fresh


def test_example_signatures_equal_the_ids_and_text_signatures(exported):
    model, _, _, loaded = exported
    inputs = random_encoder_inputs(5, SEQ_LENGTH, model.encoder.vocab_size, seed=8)
    expected = loaded.signatures["serving_default"](
        **{k: tf.constant(v) for k, v in inputs.items()}
    )["probabilities"]
    # each example as long as its text
    outputs = loaded.signatures["serve_examples"](inputs=id_examples(inputs))
    np.testing.assert_allclose(outputs["scores"], expected, atol=1e-5)
    assert outputs["classes"].numpy().tolist() == [[label.encode() for label in LABELS]] * 5

    # A batch mixing single texts and pairs: each row as the text or text_pair signature answers it.
    rows = [
        {"text_a": [TEXTS[0]]},
        {"text_a": [TEXTS[1]], "text_b": [TEXTS[2]]},
        {"text_a": [TEXTS[3]]},
        {"text_a": [TEXTS[2]], "text_b": [""]},
    ]
    got = loaded.signatures["serve_text_examples"](inputs=serialized_examples(rows))
    single = loaded.signatures["text"](text_a=tf.constant([TEXTS[0], TEXTS[3]]))["probabilities"]
    pairs = loaded.signatures["text_pair"](
        text_a=tf.constant([TEXTS[1], TEXTS[2]]), text_b=tf.constant([TEXTS[2], ""])
    )["probabilities"]
    np.testing.assert_allclose(
        got["scores"], tf.gather(tf.concat([single, pairs], 0), [0, 2, 1, 3]), atol=1e-5
    )


def test_example_signatures_run_as_tf_serving_runs_them(exported, regression_export):
    """Through the SignatureDef in a TF1 session, as TF Serving's Classify and Regress APIs call it,
    with the output checks of its classifier.cc and regressor.cc."""
    model, _, path, loaded = exported
    inputs = random_encoder_inputs(3, SEQ_LENGTH, model.encoder.vocab_size, seed=9)
    examples = {
        "serve_examples": id_examples(inputs).numpy(),
        "serve_text_examples": serialized_examples([{"text_a": [t]} for t in TEXTS]).numpy(),
    }
    results = {}
    for kind, export_dir in (("classifier", path), ("regression", regression_export)):
        with tf.Graph().as_default(), tf.compat.v1.Session() as session:
            meta_graph = tf.compat.v1.saved_model.load(session, ["serve"], str(export_dir))
            for name, serialized in examples.items():
                signature = meta_graph.signature_def[name]
                results[kind, name] = session.run(
                    {k: v.name for k, v in signature.outputs.items()},
                    {signature.inputs["inputs"].name: serialized},
                )
    for name, batch in (("serve_examples", 3), ("serve_text_examples", len(TEXTS))):
        classes, scores = (
            results["classifier", name]["classes"],
            results["classifier", name]["scores"],
        )
        assert classes.shape == scores.shape == (batch, len(LABELS)) and scores.dtype == np.float32
        outputs = results["regression", name]["outputs"]
        assert outputs.shape == (batch,) and outputs.dtype == np.float32
    np.testing.assert_allclose(
        results["classifier", "serve_examples"]["scores"],
        loaded.signatures["serving_default"](**inputs)["probabilities"],
        atol=1e-5,
    )
    regression = tf.saved_model.load(regression_export)
    np.testing.assert_allclose(
        results["regression", "serve_text_examples"]["outputs"],
        regression.signatures["text"](text_a=tf.constant(TEXTS))["score"],
        atol=1e-5,
    )


def test_bad_examples_are_refused_by_feature_name(exported):
    _, _, _, loaded = exported
    ids = {"input_word_ids": [2, 5, 3], "input_mask": [1, 1, 1], "input_type_ids": [0, 0, 0]}
    google_research_names = {
        "input_ids": ids["input_word_ids"],
        "input_mask": [1, 1, 1],
        "segment_ids": [0, 0, 0],
    }
    refused = [
        ("serve_examples", google_research_names, "each tf.Example needs input_word_ids"),
        ("serve_examples", {**ids, "input_mask": [1, 1]}, "as many input_mask as input_word_ids"),
        (
            "serve_examples",
            {**ids, "input_word_ids": [2, 2**32 + 5, 3]},
            "input_word_ids must fit in int32",
        ),
        (
            "serve_examples",
            {**ids, "input_word_ids": [2, 10**6, 3]},
            "input_word_ids must be < the vocab size",
        ),
        ("serve_text_examples", {"text_b": ["only b"]}, "one text_a value"),
        ("serve_text_examples", {"text_a": ["a", "b"]}, "one text_a value"),
        (
            "serve_text_examples",
            {"text_a": ["a"], "text_b": ["b", "c"]},
            "at most one text_b value",
        ),
    ]
    for name, row, message in refused:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            loaded.signatures[name](
                inputs=serialized_examples(
                    [ids if name == "serve_examples" else {"text_a": ["fine"]}, row]
                )
            )
