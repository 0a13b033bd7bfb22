"""Serving latency and throughput of the exported classifier (BERT-base, seq 128), next to peers.

    python benchmarks/bench_serving.py    # base config, random weights, float32 + bfloat16
    python benchmarks/bench_serving.py --config=tiny --calls=50

One process, one run. Exported SavedModel (`tf.saved_model.load`): the ids signature at
seq 128 (also from an export with `jit_compile=True`), the text signature on sentences
that pack to 128 tokens (same padded length, so the difference is the in-graph
tokenization), and the text signature on a 30-character sentence (padded only to its own
length). Peer: Model Garden's BertClassifier (tf_keras) in a `tf.function`, with and
without XLA. ONNX Runtime runs on the ids signature, at seq 128 and on the 30-character
sentence's own ids, if `tf2onnx` and `onnxruntime` import and the conversion works;
otherwise the script prints why. Batch 1: median and p99 over `--calls` calls after
warm-up; batch 32: sequences per second. A bfloat16 export (`export_model.py
--dtype=bfloat16`, which stores bfloat16 weights) is timed too, with its largest
probability difference from float32. For the short sentence, the script also times what
bounds it: the encoder's dense matmuls alone on its tokens, and one read of their weights.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from bert_tf.bert_config import BertConfig  # noqa: E402
from bert_tf.corpora import fetch_uncased_vocab  # noqa: E402
from bert_tf.export import export_task_model, with_weights_in  # noqa: E402
from bert_tf.models import BertClassifier, BertEncoder  # noqa: E402
from bert_tf.tokenization import BertTokenizer  # noqa: E402

flags.DEFINE_string("config", "base", "configs/<name>/bert_config.json")
flags.DEFINE_integer("calls", 200, "Timed batch-1 calls per peer (after warm-up).")
flags.DEFINE_integer("batch_calls", 5, "Timed batch-32 calls per peer.")
flags.DEFINE_bool(
    "overhead_only", False, "Only the text signature's paired overhead over the ids signature."
)
flags.DEFINE_string(
    "onnx_file",
    None,
    "Where tf2onnx's conversion of the float32 export is kept: reused if it exists "
    "(converting BERT-base takes tens of minutes; the weights are seeded, and the printed "
    "probability difference checks that the file matches), written there otherwise.",
)
FLAGS = flags.FLAGS
SEQ = 128
SHORT = "The movie was a pleasant surprise."  # ~30 characters


def timed(fn, calls):
    for _ in range(3):
        fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return np.array(times)


def paired_overhead(base, other, calls):
    """(other - base) seconds over `calls` back-to-back pairs: what `other` adds, robust to
    the machine's drift; the pair's order alternates, so that running second favours neither."""
    for _ in range(3):
        base(), other()
    differences = []
    for call in range(calls):
        seconds = {}
        for fn in (base, other) if call % 2 else (other, base):
            start = time.perf_counter()
            fn()
            seconds[fn] = time.perf_counter() - start
        differences.append(seconds[other] - seconds[base])
    return np.array(differences)


def preprocessing_after_model(model_call, preprocess, nothing, calls):
    """(ms) The in-graph tokenize-and-pack time with the caches as a request finds them:
    `preprocess()` and `nothing()` (a tf.function that returns its input, for the call's
    own cost) each timed right after `model_call()`, interleaved; difference of medians.
    Unlike the paired signatures, this does not carry the model's call-to-call noise."""
    times = {preprocess: [], nothing: []}
    for _ in range(calls):
        for fn in times:
            model_call()
            start = time.perf_counter()
            fn()
            times[fn].append(time.perf_counter() - start)
    return 1e3 * (np.median(times[preprocess]) - np.median(times[nothing]))


def report(name, fn1, fn32) -> tuple[float, float]:
    """Times and prints one row; returns (batch-1 median in ms, batch-32 sequences per second)."""
    one, many = timed(fn1, FLAGS.calls), timed(fn32, FLAGS.batch_calls)
    print(
        f"| {name} | {1e3 * np.median(one):.1f} ms | {1e3 * np.percentile(one, 99):.1f} ms | "
        f"{32 / np.median(many):.1f} seq/s |",
        flush=True,
    )
    return 1e3 * np.median(one), 32 / np.median(many)


def print_ratios(ours: dict, peers: dict) -> None:
    """Our ids-signature rows against the best peer: its latency / ours, our throughput / its."""
    best_latency = min(peers.items(), key=lambda item: item[1][0])
    best_throughput = max(peers.items(), key=lambda item: item[1][1])
    print(
        f"\nAgainst the best peer (batch 1: {best_latency[0]}; batch 32: {best_throughput[0]}), "
        f"above 1 is faster:"
    )
    for name, (latency, throughput) in ours.items():
        print(
            f"  {name}: batch 1 {best_latency[1][0] / latency:.2f}x, "
            f"batch 32 {throughput / best_throughput[1][1]:.2f}x"
        )


def export(config, vocab, directory, dtype, jit_compile=False):
    """The seeded classifier, weights in `dtype` (`export_model.py --dtype`), exported, loaded."""
    keras.utils.set_random_seed(0)
    model = BertClassifier(BertEncoder.from_bert_config(config), num_classes=2)
    model.build_with_dummy_inputs()
    model = with_weights_in(model, dtype)
    return model, tf.saved_model.load(
        export_task_model(
            model,
            directory,
            tokenizer=BertTokenizer(vocab),
            seq_length=SEQ,
            jit_compile=jit_compile,
        )
    )


def short_request_floor(config, rows):
    """(ms) The encoder's dense layers alone, as one chain of matmuls on `rows` tokens, and
    one read of their weights (`reduce_sum`): what bounds a short request on this machine."""
    h, inner = config.hidden_size, config.intermediate_size
    shapes = [(h, h)] * 4 + [(h, inner), (inner, h)]  # query, key, value, output, FFN in, FFN out
    weights = [
        tf.random.normal(shape, stddev=shape[0] ** -0.5)
        for _ in range(config.num_hidden_layers)
        for shape in shapes
    ]
    x = tf.random.normal([rows, h])
    chain = tf.function(lambda x: functools.reduce(tf.matmul, weights, x))
    read = tf.function(lambda: tf.add_n([tf.reduce_sum(w) for w in weights]))
    return 1e3 * np.median(timed(lambda: chain(x), FLAGS.calls)), 1e3 * np.median(
        timed(read, FLAGS.calls)
    )


def model_garden_peer(config, jit_compile):
    import tensorflow_models as tfm
    import tf_keras

    network = tfm.nlp.networks.BertEncoder(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        inner_dim=config.intermediate_size,
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=False),
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
    )
    classifier = tfm.nlp.models.BertClassifier(network, num_classes=2)
    return tf.function(
        lambda ids: classifier([ids["input_word_ids"], ids["input_mask"], ids["input_type_ids"]]),
        jit_compile=jit_compile,
    )


# tf2onnx 1.16 in a child process: it needs TF Text's ops registered to load the SavedModel (the
# text signatures use them), and it still calls numpy<2's `np.cast[dtype](x)`.
ONNX_CONVERT = """
import sys
import numpy as np
import tensorflow_text  # noqa: F401


class _Cast(dict):
    def __missing__(self, dtype):
        return lambda x: np.asarray(x, dtype=dtype)


np.cast = _Cast()
from tf2onnx import convert  # noqa: E402
sys.argv = ["tf2onnx", "--saved-model", sys.argv[1], "--signature_def", "serving_default",
            "--output", sys.argv[2]]
convert.main()
"""


def onnx_peer(path, onnx_path):
    """ONNX Runtime on tf2onnx's conversion of the ids signature, or why it cannot run."""
    try:
        import onnxruntime
        import tf2onnx  # noqa: F401
    except ImportError as error:
        return f"not run: {error} (tf2onnx/onnxruntime not installed)"
    if not os.path.exists(onnx_path):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", ONNX_CONVERT, path, onnx_path], capture_output=True, text=True
        )
        if result.returncode or not os.path.exists(onnx_path):
            return (
                "not run: tf2onnx could not convert the SavedModel "
                f"({result.stderr.strip().splitlines()[-1]})"
            )
        print(f"\ntf2onnx converted the export in {time.perf_counter() - start:.0f} s", flush=True)
    session = onnxruntime.InferenceSession(onnx_path)
    return lambda batch: session.run(["probabilities"], batch)[0]


def main(argv):
    del argv
    config = BertConfig.from_json_file(f"configs/{FLAGS.config}/bert_config.json")
    vocab = fetch_uncased_vocab()
    rng = np.random.default_rng(0)

    def ids(batch):
        return {
            "input_word_ids": tf.constant(rng.integers(1000, 20000, (batch, SEQ)), tf.int32),
            "input_mask": tf.ones((batch, SEQ), tf.int32),
            "input_type_ids": tf.zeros((batch, SEQ), tf.int32),
        }

    one, many = ids(1), ids(32)
    long_text = " ".join(["word"] * (SEQ - 2))  # packs to exactly 128 tokens
    # The requests, built once like the id tensors, so that only the signatures are timed.
    long_one, long_many = tf.constant([long_text]), tf.constant([long_text] * 32)
    short_one, short_many = tf.constant([SHORT]), tf.constant([SHORT] * 32)
    print(f"{FLAGS.config} config, seq {SEQ}, {os.cpu_count()} CPUs, TF {tf.__version__}\n")
    print("| peer | batch 1, median | batch 1, p99 | batch 32 |\n| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as directory:
        _, loaded = export(config, vocab, os.path.join(directory, "overhead"), "float32")
        serve, text = loaded.signatures["serving_default"], loaded.signatures["text"]
        overhead = paired_overhead(lambda: serve(**one), lambda: text(text_a=long_one), FLAGS.calls)
        medians = np.median(
            np.random.default_rng(0).choice(overhead, (1000, overhead.size)), axis=1
        )
        print(
            f"Text signature's overhead over the ids signature, 128 tokens, batch 1, median of "
            f"{FLAGS.calls} back-to-back pairs: "
            f"{1e3 * np.median(overhead):.2f} ms (bootstrap 95% interval "
            f"{1e3 * np.percentile(medians, 2.5):.2f} to "
            f"{1e3 * np.percentile(medians, 97.5):.2f} ms)\n"
        )
        tokenizer, text_spec = BertTokenizer(vocab), [tf.TensorSpec([None], tf.string)]
        pack = tf.function(
            lambda t: tokenizer.pack_inputs([tokenizer.tokenize(t)], SEQ, pad_to_seq_length=False),
            input_signature=text_spec,
        )
        nothing = tf.function(tf.identity, input_signature=text_spec)
        cold = preprocessing_after_model(
            lambda: serve(**one), lambda: pack(long_one), lambda: nothing(long_one), FLAGS.calls
        )
        print(
            f"The same tokenize-and-pack on its own, right after each model call: {cold:.2f} ms\n"
        )
        if FLAGS.overhead_only:
            return
        results, ours, peers = {}, {}, {}
        for dtype in ("float32", "bfloat16"):
            _, loaded = export(config, vocab, os.path.join(directory, dtype), dtype)
            serve, text = loaded.signatures["serving_default"], loaded.signatures["text"]
            name = f"bert_tf export, ids signature ({dtype})"
            ours[name] = report(name, lambda: serve(**one), lambda: serve(**many))
            report(
                f"bert_tf export, text signature, 128 tokens ({dtype})",
                lambda: text(text_a=long_one),
                lambda: text(text_a=long_many),
            )
            report(
                f"bert_tf export, text signature, 30-char sentence ({dtype})",
                lambda: text(text_a=short_one),
                lambda: text(text_a=short_many),
            )
            results[dtype] = serve(**many)["probabilities"].numpy()
        rows = int(tf.size(tokenizer.tokenize(SHORT))) + 2
        chain, read = short_request_floor(config, rows)
        print(
            "\nThe 30-character sentence's floor: the encoder's dense matmuls alone on its "
            f"{rows} tokens {chain:.1f} ms; reading their weights once {read:.1f} ms\n"
        )
        _, loaded = export(
            config, vocab, os.path.join(directory, "xla"), "float32", jit_compile=True
        )
        serve = loaded.signatures["serving_default"]
        name = "bert_tf export --jit_compile, ids signature (float32)"
        ours[name] = report(name, lambda: serve(**one), lambda: serve(**many))
        print(
            f"\nbfloat16 vs float32: max |probability difference| "
            f"{np.abs(results['float32'] - results['bfloat16']).max():.4f}"
        )
        for jit in (True, False):
            peer = model_garden_peer(config, jit)
            name = f"Model Garden BertClassifier, tf.function{', XLA' if jit else ''}"
            peers[name] = report(name, lambda: peer(one), lambda: peer(many))
        onnx = onnx_peer(
            os.path.join(directory, "float32"),
            FLAGS.onnx_file or os.path.join(directory, "model.onnx"),
        )
        if isinstance(onnx, str):
            print(f"\nONNX Runtime: {onnx}")
        else:
            numpy_one = {k: v.numpy() for k, v in one.items()}
            numpy_many = {k: v.numpy() for k, v in many.items()}
            name = "ONNX Runtime (tf2onnx of the ids signature)"
            peers[name] = report(name, lambda: onnx(numpy_one), lambda: onnx(numpy_many))
            short_ids_one = {k: v.numpy() for k, v in pack(short_one).items()}
            short_ids_many = {k: v.numpy() for k, v in pack(short_many).items()}
            report(
                f"ONNX Runtime, the 30-char sentence's {rows} ids",
                lambda: onnx(short_ids_one),
                lambda: onnx(short_ids_many),
            )
            print(
                f"\nONNX Runtime vs bert_tf float32: max |probability difference| "
                f"{np.abs(onnx(numpy_many) - results['float32']).max():.2e}"
            )
        print_ratios(ours, peers)


if __name__ == "__main__":
    app.run(main)
