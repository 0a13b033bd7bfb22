"""Pretraining TFRecords from a text corpus: google-research/bert's `create_pretraining_data`, fast.

The corpus is cut into chunks of whole documents (`corpus.plan_chunks`). Each
chunk is one task, run by a pool of worker processes: tokenize (tensorflow-text,
big batches), build sentence pairs for `dupe_factor` passes, shuffle, truncate,
pack, mask (numpy), serialize (`example_encoder`) and write the TFRecords to a
scratch file. The main process moves each scratch file's records round-robin to
the output shards, in chunk order, so the output depends on the seed and the
inputs only, not on `num_workers`. A random next sentence comes from another
document of the same chunk (a chunk spans files, so small files are grouped).
Memory is bounded by the chunk size times the workers, whatever the corpus size.

With `next_sentence_prediction=False`, the chunk's documents, in a new random order for each
of the `dupe_factor` passes, are one text with a `[SEP]` between documents, cut into full
sequences (`pretraining_instances.text_windows`): every example of a chunk is full but its
last, and has no `next_sentence_labels`; `short_seq_prob` is not used.

Workers start by `fork`, with TensorFlow imported and the tokenizer's Unicode
tables built, unless this process already ran TensorFlow ops (then by `spawn`).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import gc
import hashlib
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from concurrent.futures.process import BrokenProcessPool, ProcessPoolExecutor

import numpy as np
import tensorflow as tf
from absl import logging
from tensorflow.python.eager import context
from tqdm import tqdm

from bert_tf import io_utils
from bert_tf.bert_config import BertConfig
from bert_tf.data import corpus, example_encoder, masked_lm, word_segmentation
from bert_tf.data.pretraining_instances import (
    Documents,
    PairSpans,
    create_pairs,
    pack_pairs,
    pack_windows,
    text_windows,
    truncate_pairs,
)
from bert_tf.errors import UserInputError
from bert_tf.tokenization import BertTokenizer, Vocab, unicode_tables

MAX_SEQ_LENGTH_WITHOUT_CONFIG = 512
_BATCH = 2048  # pairs masked and serialized at a time
_TFRECORD_FRAMING = 16  # bytes around each TFRecord: its length (8) and two masked CRC32Cs (4 each)
_PR_SET_PDEATHSIG = 1  # Linux prctl(2): the signal this process gets when its parent dies


class PretrainingDataError(UserInputError):
    """Flags that cannot produce data; the message names the flag."""


@dataclasses.dataclass(frozen=True)
class PretrainingDataOptions:
    """google-research/bert's flags, with its defaults."""

    vocab_file: str
    do_lower_case: bool = True
    do_whole_word_mask: bool = False
    word_segmenter: str = "none"  # with whole-word masking: "jieba" or "rjieba" group Chinese words
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    random_seed: int = 12345
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    next_sentence_prediction: bool = True  # False: packed text, no next_sentence_labels

    @property
    def max_num_tokens(self) -> int:
        """Tokens of A and B together: `max_seq_length` less `[CLS]` and two `[SEP]`; of packed
        text: less `[CLS]` and one `[SEP]`."""
        return self.max_seq_length - (3 if self.next_sentence_prediction else 2)

    def validate(self, bert_config_file: str | None = None) -> None:
        """Raises `PretrainingDataError` (or `ConfigError`) naming the bad flag.

        `max_predictions_per_seq` must hold the predictions of a full-length
        sequence, `max(1, round(max_seq_length * masked_lm_prob))`, or the cap
        would lower the masking rate. `max_seq_length` above 512 needs
        `bert_config_file`, and may not exceed its `max_position_embeddings`.
        """

        def fail(message):
            raise PretrainingDataError(message)

        if self.word_segmenter != "none":
            if not self.do_whole_word_mask:
                fail(f"`word_segmenter`={self.word_segmenter} needs `do_whole_word_mask`")
            try:
                word_segmentation.segmenter(self.word_segmenter)
            except word_segmentation.SegmenterError as error:
                fail(f"`word_segmenter`: {error}")
        shortest, layout = (
            (5, "[CLS] A [SEP] B [SEP]")
            if self.next_sentence_prediction
            else (3, "[CLS] text [SEP]")
        )
        if self.max_seq_length < shortest:
            fail(f"`max_seq_length`={self.max_seq_length}: must be at least {shortest} ({layout})")
        if bert_config_file:
            limit = BertConfig.from_json_file(bert_config_file).max_position_embeddings
            if self.max_seq_length > limit:
                fail(
                    f"`max_seq_length`={self.max_seq_length} is greater than "
                    f"max_position_embeddings={limit} of `bert_config_file`={bert_config_file}"
                )
        elif self.max_seq_length > MAX_SEQ_LENGTH_WITHOUT_CONFIG:
            fail(
                f"`max_seq_length`={self.max_seq_length} is greater than "
                f"{MAX_SEQ_LENGTH_WITHOUT_CONFIG}:"
                " pass the model's `bert_config_file` (max_position_embeddings) to allow it"
            )
        if not 0.0 < self.masked_lm_prob <= 1.0:
            fail(f"`masked_lm_prob`={self.masked_lm_prob}: must be in (0, 1]")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            fail(f"`short_seq_prob`={self.short_seq_prob}: must be in [0, 1]")
        if self.dupe_factor < 1:
            fail(f"`dupe_factor`={self.dupe_factor}: must be at least 1")
        full = int(
            masked_lm.num_to_predict(self.max_seq_length, self.masked_lm_prob, self.max_seq_length)
        )
        if self.max_predictions_per_seq < full:
            fail(
                f"`max_predictions_per_seq`={self.max_predictions_per_seq} is too small for"
                f" `masked_lm_prob`={self.masked_lm_prob}: a sequence of `max_seq_length`="
                f"{self.max_seq_length} has {full} predictions; use {full} to {self.max_seq_length}"
            )
        if self.max_predictions_per_seq > self.max_seq_length:
            fail(
                f"`max_predictions_per_seq`={self.max_predictions_per_seq} is greater than"
                f" `max_seq_length`={self.max_seq_length}: use {full} to {self.max_seq_length}"
            )


@dataclasses.dataclass
class Statistics:
    """Counts over the written examples; `summary()` is the end-of-run report."""

    documents: int = 0
    examples: int = 0
    real_tokens: int = 0
    random_next: int = 0
    actions: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3, np.int64))
    masked_words: int = 0  # predicted words (tokens, without whole-word masking)
    masked_chars: int = 0  # their characters (a `##` piece without its `##`)
    seconds: float = 0.0

    def add(self, other: "Statistics") -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    @property
    def masked_fraction(self) -> float:
        return float(self.actions.sum()) / max(self.real_tokens, 1)

    @property
    def mean_masked_word_chars(self) -> float:
        return self.masked_chars / max(self.masked_words, 1)

    def summary(self, next_sentence_prediction: bool = True) -> str:
        seconds = self.seconds
        predicted = max(int(self.actions.sum()), 1)
        mask, rand, keep = (100.0 * self.actions / predicted).tolist()
        return (
            f"Wrote {self.examples:,} examples from {self.documents:,} documents in {seconds:.1f} s"
            f" ({self.examples / max(seconds, 1e-9):,.0f} examples/s).\n"
            f"  average real length {self.real_tokens / max(self.examples, 1):.1f} tokens;"
            f" masked fraction {self.masked_fraction:.4f}"
            f" ({mask:.1f}% [MASK], {rand:.1f}% random, {keep:.1f}% unchanged);"
            f" mean masked word {self.mean_masked_word_chars:.2f} characters"
            + (
                f"; NSP {self.random_next / max(self.examples, 1):.3f} random next /"
                f" {1 - self.random_next / max(self.examples, 1):.3f} real next"
                if next_sentence_prediction
                else "; no next-sentence labels (packed text)"
            )
        )


class _ChunkProcessor:
    """Turns one corpus chunk into a scratch file of shuffled TFRecords (one per process)."""

    def __init__(self, options: PretrainingDataOptions, scratch_dir: str):
        self.options = options
        self.scratch_dir = scratch_dir
        # Corpus text: a literal "[SEP]" is split as
        # google-research/bert splits it, not the separator.
        self.tokenizer = BertTokenizer(
            options.vocab_file, options.do_lower_case, split_special_tokens=True
        )
        vocab = self.tokenizer.vocab
        self.special_ids = dict(cls_id=vocab.cls_id, sep_id=vocab.sep_id, pad_id=vocab.pad_id)
        self.masking = masked_lm.MaskingConfig(
            masked_lm_prob=options.masked_lm_prob,
            max_predictions_per_seq=options.max_predictions_per_seq,
            vocab_size=len(vocab),
            cls_id=vocab.cls_id,
            sep_id=vocab.sep_id,
            mask_id=vocab.mask_id,
        )
        self.words = (
            word_segmentation.WordGrouper(
                vocab.tokens, options.do_lower_case, options.word_segmenter
            )
            if options.do_whole_word_mask
            else None
        )
        self.token_chars = np.array([len(t.removeprefix("##")) for t in vocab.tokens])  # [vocab]

    def _tokenize(self, lines):
        ids = self.tokenizer.tokenize(lines)
        return ids.flat_values.numpy(), ids.row_splits.numpy()

    def _examples(
        self, batch: PairSpans | np.ndarray, documents: Documents, rng: np.random.Generator
    ) -> tuple[dict[str, np.ndarray], Statistics]:
        """Pairs truncated, packed and masked, or `text_windows` packed and masked: (the schema's
        features `[examples, ...]`, their statistics)."""
        labels = None
        if isinstance(batch, PairSpans):
            spans = truncate_pairs(batch, self.options.max_num_tokens, rng)
            features = pack_pairs(
                spans,
                documents.token_ids,
                self.options.max_seq_length,
                **self.special_ids,
                continues=documents.continues,
            )
            labels = spans.is_random_next
        else:
            features = pack_windows(
                batch, documents.token_ids, **self.special_ids, continues=documents.continues
            )
        masked, actions, words = masked_lm.mask_tokens(
            features["input_ids"],
            features["input_mask"],
            self.masking,
            rng,
            features.pop("continues", None),
        )
        features.update(masked)
        if labels is not None:
            features["next_sentence_labels"] = labels
        predicted = masked["masked_lm_weights"] > 0
        stats = Statistics(
            examples=len(batch),
            real_tokens=int(features["input_mask"].sum()),
            random_next=0 if labels is None else int(labels.sum()),
            actions=actions,
            masked_words=words,
            masked_chars=int(self.token_chars[masked["masked_lm_ids"][predicted]].sum()),
        )
        return features, stats

    def _instances(
        self, documents: Documents, py_rng: random.Random, np_rng: np.random.Generator
    ) -> PairSpans | np.ndarray:
        """The chunk's `dupe_factor` passes, shuffled: sentence pairs, or windows of packed text."""
        options = self.options
        if not options.next_sentence_prediction:
            orders = [
                np_rng.permutation(documents.num_documents) for _ in range(options.dupe_factor)
            ]
            windows = text_windows(documents, orders, options.max_num_tokens)
            return windows[np_rng.permutation(len(windows))]
        order = list(range(documents.num_documents))
        py_rng.shuffle(order)
        spans = PairSpans.concatenate(
            [
                create_pairs(
                    documents, order, options.max_num_tokens, options.short_seq_prob, py_rng
                )
                for _ in range(options.dupe_factor)
            ]
        )
        return spans.take(np_rng.permutation(len(spans)))

    def __call__(self, chunk: corpus.CorpusChunk) -> tuple[str, np.ndarray, Statistics]:
        """(the scratch file's path, the size of each record in it `[examples]`, statistics)."""
        options = self.options
        documents = Documents.from_lines(
            corpus.read_chunk(chunk),
            self._tokenize,
            None if self.words is None else self.words.continues,
        )
        seeds = np.random.SeedSequence([options.random_seed, chunk.index])
        py_rng = random.Random(int(seeds.generate_state(1)[0]))
        np_rng = np.random.default_rng(seeds)
        instances = self._instances(documents, py_rng, np_rng)
        path = os.path.join(self.scratch_dir, f"chunk-{chunk.index:06d}.tfrecord")
        sizes, stats = [np.zeros(0, np.int64)], Statistics(documents=documents.num_documents)
        with tf.io.TFRecordWriter(path) as writer:
            for begin in range(0, len(instances), _BATCH):
                batch = np.arange(begin, min(begin + _BATCH, len(instances)))
                batch = (
                    instances.take(batch) if isinstance(instances, PairSpans) else instances[batch]
                )
                features, batch_stats = self._examples(batch, documents, np_rng)
                data, lengths = example_encoder.encode_batch(features)
                for record in example_encoder.split_records(data, lengths):
                    writer.write(record)
                sizes.append(lengths + _TFRECORD_FRAMING)
                stats.add(batch_stats)
        return path, np.concatenate(sizes), stats


_processor: _ChunkProcessor | None = None  # the worker process's own


def _exit_with_parent(parent_pid: int) -> None:
    """Has Linux kill this worker when the main process dies, even by SIGKILL or the
    out-of-memory killer, which run no clean-up: an orphan would go on holding its memory.

    The signal comes when the *thread* that started the worker ends. In Python 3.11
    `ProcessPoolExecutor` starts its workers in the thread that submits the tasks (the
    one running `create_pretraining_data`, which outlives the pool), and starts no
    replacement from its manager thread (that needs `max_tasks_per_child`). Only Linux
    has this signal.
    """
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # it died before the prctl
        os._exit(1)


def _init_worker(options: PretrainingDataOptions, scratch_dir: str, parent_pid: int) -> None:
    global _processor
    _exit_with_parent(parent_pid)
    # The main process ends the workers on Ctrl-C or SIGTERM (`_worker_pool`).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # One process per core: TensorFlow's own thread pools would only compete.
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    _processor = _ChunkProcessor(options, scratch_dir)


@contextlib.contextmanager
def _worker_pool(num_workers: int, method: str, options: PretrainingDataOptions, scratch_dir: str):
    """A pool of `num_workers` chunk processors; on an error, its workers are killed (as
    `multiprocessing.Pool` does) and gone before the scratch directory is removed."""
    pool = ProcessPoolExecutor(
        num_workers,
        multiprocessing.get_context(method),
        _init_worker,
        (options, scratch_dir, os.getpid()),
    )
    try:
        yield pool
    except BaseException:
        for process in list(pool._processes.values()):  # pylint: disable=protected-access
            process.terminate()
        raise
    finally:
        pool.shutdown(cancel_futures=True)


def _process(chunk: corpus.CorpusChunk):
    return _processor(chunk)


def _worker_results(results):
    """`results`, with a worker that died (killed: out of memory?) as a `PretrainingDataError`."""
    try:
        yield from results
    except BrokenProcessPool:
        raise PretrainingDataError(
            "a worker process died (killed, out of memory?): lower `chunk_mb` or `num_workers`"
        ) from None


def _move_records(path: str, sizes: np.ndarray, shards: list, first_index: int) -> None:
    """Appends the records of a scratch file to the shards, round robin, and removes the file.

    Record i of the file is example `first_index + i` of the run, which goes to
    shard `(first_index + i) % len(shards)`.
    """
    with open(path, "rb") as f:
        if len(shards) == 1:
            shutil.copyfileobj(f, shards[0], 1 << 20)
        else:
            data = f.read()
            ends = np.cumsum(sizes).tolist()
            starts = [0] + ends[:-1]
            for k, shard in enumerate(shards):
                records = range((k - first_index) % len(shards), len(sizes), len(shards))
                shard.write(b"".join(data[starts[i] : ends[i]] for i in records))
    os.remove(path)


@contextlib.contextmanager
def _gc_frozen():
    """Freezes the garbage collector's objects while workers fork (Python's advice for `fork`):
    their collections then skip what they inherit, so it stays shared instead of copied."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _tensorflow_runtime_started() -> bool:
    """Whether this process ran TensorFlow ops: after that, forking it is not safe.

    Before, `fork` starts the workers at once, with TensorFlow already imported.
    """
    ctx = context.context_safe()
    return ctx is not None and ctx._initialized  # pylint: disable=protected-access


def output_paths(output_file: str, num_output_shards: int | None = None) -> list[str]:
    """`--output_file` (comma-separated) and `--num_output_shards` -> the shard paths.

    With one output file and N shards, the shards are `{output_file}-00000-of-0000N`... (for
    N = 1 too); a list of N files is N shards as named.
    """
    paths = [p.strip() for p in output_file.split(",") if p.strip()]
    if not paths:
        raise PretrainingDataError("`output_file`: no output file given")
    if num_output_shards is None:
        return paths
    if num_output_shards < 1:
        raise PretrainingDataError(f"`num_output_shards`={num_output_shards}: must be at least 1")
    if len(paths) == 1:
        return [f"{paths[0]}-{i:05d}-of-{num_output_shards:05d}" for i in range(num_output_shards)]
    if num_output_shards != len(paths):
        raise PretrainingDataError(
            f"`num_output_shards`={num_output_shards} needs "
            f"one `output_file` (a prefix), got {len(paths)}"
        )
    return paths


@contextlib.contextmanager
def _scratch_directory(output_files: list[str]):
    """A local scratch directory, removed at the end. Its name comes from the outputs, so that a
    rerun with the same outputs first removes what a killed run left there."""
    key = "\n".join(io_utils.canonical_path(p) for p in output_files)
    path = os.path.join(
        tempfile.gettempdir(),
        f"create_pretraining_data-{hashlib.sha256(key.encode()).hexdigest()[:16]}",
    )
    if tf.io.gfile.exists(path):
        tf.io.gfile.rmtree(path)
    tf.io.gfile.makedirs(path)
    try:
        yield path
    finally:
        with contextlib.suppress(tf.errors.OpError):
            tf.io.gfile.rmtree(path)


def create_pretraining_data(
    input_files: list[str],
    output_files: list[str],
    options: PretrainingDataOptions,
    *,
    num_workers: int = 1,
    chunk_bytes: int = 4 << 20,
    bert_config_file: str | None = None,
    progress: bool = True,
) -> Statistics:
    """Writes the pretraining examples of `input_files` to `output_files` (TFRecord shards).

    Every check runs before any output is opened. A failed run leaves no output file (each
    shard is written under a temporary name), scratch directory or output directory it
    created; a rerun removes what a killed run left. A worker process that dies (out of
    memory) ends the run with `PretrainingDataError`. An input of one chunk, or on ram://,
    is processed in this process; shards that get no example are written empty, with a warning.

    Returns:
      The statistics of what was written.

    Raises:
      PretrainingDataError, corpus.CorpusError, VocabError, ConfigError: bad
      flags or input, each with a one-line message naming the flag or the file.
    """
    corpus.check_output_files(
        output_files, input_files, vocab_file=options.vocab_file, bert_config_file=bert_config_file
    )
    options.validate(bert_config_file)
    # here, not in each worker
    Vocab.from_file(options.vocab_file).check_casing(options.do_lower_case)
    chunks = corpus.plan_chunks(input_files, chunk_bytes)
    total_bytes = sum(c.num_bytes for c in chunks)
    stats = Statistics()
    start_time = time.perf_counter()
    with contextlib.ExitStack() as stack:
        stack.enter_context(
            io_utils.created_directories(  # exited last: after the shards are removed
                [os.path.dirname(p) for p in output_files],
                "output_file",
                error=PretrainingDataError,
            )
        )
        scratch_dir = stack.enter_context(_scratch_directory(output_files))
        shards = [
            stack.enter_context(
                tf.io.gfile.GFile(stack.enter_context(io_utils.atomic_output(p)), "wb")
            )
            for p in output_files
        ]
        # One chunk is processed here: no process to start.
        # Nor can workers read this process's ram:// files.
        in_memory = any(map(io_utils.is_process_local, [*input_files, options.vocab_file]))
        workers = 1 if in_memory else min(num_workers, len(chunks))
        if workers > 1:
            method = "spawn" if _tensorflow_runtime_started() else "fork"
            if method == "fork":
                unicode_tables.build_tables(options.do_lower_case)  # once, for every worker
            pool = stack.enter_context(_worker_pool(workers, method, options, scratch_dir))
            with _gc_frozen():  # the first task forks the workers
                results = _worker_results(pool.map(_process, chunks))
        else:
            results = map(_ChunkProcessor(options, scratch_dir), chunks)
        bar = stack.enter_context(
            tqdm(
                total=total_bytes,
                unit="B",
                unit_scale=True,
                file=sys.stderr,
                disable=not progress,
                desc="create_pretraining_data",
            )
        )
        single_document_chunks = 0
        for chunk, (path, sizes, chunk_stats) in zip(chunks, results):
            _move_records(path, sizes, shards, stats.examples)
            stats.add(chunk_stats)
            single_document_chunks += chunk_stats.documents == 1
            elapsed = time.perf_counter() - start_time
            bar.set_postfix_str(
                f"{stats.documents / elapsed:,.0f} documents/s,"
                f" {stats.examples / elapsed:,.0f} examples/s",
                refresh=False,
            )
            bar.update(chunk.num_bytes)
        if not stats.examples:
            raise corpus.CorpusError(
                f"the corpus has no tokens: {len(input_files)} input files, no example"
            )
        if single_document_chunks and len(chunks) > 1:
            logging.warning(
                "%d of the %d chunks hold a single document, longer than --chunk_mb: their random "
                "next sentences come from that same document (raise --chunk_mb)",
                single_document_chunks,
                len(chunks),
            )
        if stats.examples < len(shards):
            logging.warning(
                "%d of the %d output shards are empty (run_pretraining.py refuses them; use "
                "fewer --num_output_shards): the corpus gave only %d examples",
                len(shards) - stats.examples,
                len(shards),
                stats.examples,
            )
    stats.seconds = time.perf_counter() - start_time
    return stats
