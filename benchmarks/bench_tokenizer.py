"""Tokenizer throughput and exactness: bert_tf vs FullTokenizer, HF tokenizers, tf-text.

    python benchmarks/bench_tokenizer.py            # the Wikipedia sample, uncased vocab
    python benchmarks/bench_tokenizer.py --language=zh  # Chinese news, bert-base-chinese's vocab

Every peer tokenizes the same lines with the same vocab, in batches of
`--batch_size` lines (FullTokenizer: one line at a time, as it works), with
rounds alternating the peers; each peer's best round counts. The time is that of
the peer's own output (HF `Encoding`s, tf `RaggedTensor`s from a `tf.function`);
tokens/s is the reference token count over that time. A mismatch is a line whose ids differ from
Model Garden's `FullTokenizer` (google-research/bert's tokenization.py).
"""

import time

import tensorflow as tf
import tensorflow_text as tf_text
import tokenizers
from absl import app, flags
from official.nlp.tools import tokenization as reference

from bert_tf.corpora import public_data
from bert_tf.tokenization import BertTokenizer

flags.DEFINE_enum(
    "language",
    "en",
    ["en", "zh"],
    "The default input and vocab: the Wikipedia sample with "
    "bert-base-uncased's vocab, or the Chinese news sample with bert-base-chinese's.",
)
flags.DEFINE_string("input_file", None, "Text, one line a sequence (default: --language's sample).")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab (default: --language's).")
flags.DEFINE_integer(
    "max_lines",
    None,
    "Non-blank lines of the input read (default: all; 20,000 of the Chinese news sample).",
)
flags.DEFINE_bool("do_lower_case", True, "Uncased (true) or cased tokenization.")
flags.DEFINE_integer("batch_size", 1024, "Lines per call for the batch tokenizers.")
flags.DEFINE_integer("rounds", 3, "Timed rounds per peer, alternating peers.")
FLAGS = flags.FLAGS


def peers(vocab_file, lower_case):
    """name -> (tokenize a batch of lines natively, native output -> list of id lists)."""
    full = reference.FullTokenizer(vocab_file, do_lower_case=lower_case)
    hugging_face = tokenizers.BertWordPieceTokenizer(
        vocab_file,
        lowercase=lower_case,
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=None,
    )
    with open(vocab_file, encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    fast_bert = tf_text.FastBertTokenizer(
        vocab, token_out_type=tf.int32, lower_case_nfd_strip_accents=lower_case
    )
    ours = BertTokenizer(vocab_file, do_lower_case=lower_case)
    spec = [tf.TensorSpec([None], tf.string)]
    ragged_to_lists = tf.RaggedTensor.to_list
    return {
        "FullTokenizer (Model Garden)": (
            lambda lines: [full.convert_tokens_to_ids(full.tokenize(x)) for x in lines],
            list,
        ),
        "HF tokenizers (batch)": (
            lambda lines: hugging_face.encode_batch(lines, add_special_tokens=False),
            lambda encodings: [e.ids for e in encodings],
        ),
        "tf-text FastBertTokenizer": (
            tf.function(fast_bert.tokenize, input_signature=spec),
            ragged_to_lists,
        ),
        "bert_tf BertTokenizer": (
            tf.function(ours.tokenize, input_signature=spec),
            ragged_to_lists,
        ),
    }


def main(argv):
    del argv
    chinese = FLAGS.language == "zh"
    input_file = FLAGS.input_file or (
        public_data.fetch_chinese_news() if chinese else public_data.fetch_wikipedia_sample()
    )
    vocab_file = str(
        FLAGS.vocab_file
        or (public_data.fetch_chinese_vocab() if chinese else public_data.fetch_uncased_vocab())
    )
    with open(input_file, encoding="utf-8") as f:
        lines = [line for line in f.read().split("\n") if line.strip()]
    lines = lines[: FLAGS.max_lines or (20000 if chinese and not FLAGS.input_file else None)]
    batches = [lines[i : i + FLAGS.batch_size] for i in range(0, len(lines), FLAGS.batch_size)]
    tokenize = peers(vocab_file, FLAGS.do_lower_case)
    outputs = {
        name: [ids for batch in batches for ids in to_lists(fn(batch))]  # also the warm-up
        for name, (fn, to_lists) in tokenize.items()
    }
    expected = outputs["FullTokenizer (Model Garden)"]
    n_tokens = sum(map(len, expected))
    best = dict.fromkeys(tokenize, float("inf"))
    for _ in range(FLAGS.rounds):
        for name, (fn, _) in tokenize.items():
            start = time.perf_counter()
            for batch in batches:
                fn(batch)
            best[name] = min(best[name], time.perf_counter() - start)

    print(
        f"{len(lines):,} lines, {n_tokens:,} tokens (FullTokenizer), {vocab_file}, "
        f"do_lower_case={FLAGS.do_lower_case}, batches "
        f"of {FLAGS.batch_size}, best of {FLAGS.rounds}"
    )
    print(f"{'peer':30} {'seconds':>8} {'tokens/s':>12} {'mismatching lines':>18}")
    for name, seconds in best.items():
        mismatches = sum(a != b for a, b in zip(outputs[name], expected))
        print(f"{name:30} {seconds:8.3f} {n_tokens / seconds:12,.0f} {mismatches:18,}")
    ratio = best["HF tokenizers (batch)"] / best["bert_tf BertTokenizer"]
    print(f"bert_tf / HF tokenizers throughput: {ratio:.1f}x")


if __name__ == "__main__":
    app.run(main)
