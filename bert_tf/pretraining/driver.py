"""The driver of run_pretraining.py: data, model, optimizer, loops, logs and checkpoints."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time

import keras
import tensorflow as tf
from absl import logging

from bert_tf import io_utils, output_kinds
from bert_tf.bert_config import CONFIG_FILE, BertConfig
from bert_tf.checkpoints import resolve_bert_config
from bert_tf.data import corpus, dynamic_masking, pretraining_dataset, word_segmentation
from bert_tf.errors import UserInputError
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.pretraining import checkpoints
from bert_tf.pretraining.loops import PretrainingRunner
from bert_tf.tokenization import Vocab
from bert_tf.training import console, distribution, optimization, workers
from bert_tf.training.eval_results import write_eval_results


@dataclasses.dataclass
class PretrainingOptions:
    """What run_pretraining.py's flags say, as one value (tests build it directly)."""

    # None: the resumed output_dir's, else init_checkpoint's (`resolve_config`)
    bert_config_file: str | None
    input_file: str | None  # None: an eval-only run on eval_file
    output_dir: str
    eval_file: str | None = None
    init_checkpoint: str | None = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    do_train: bool = True
    do_eval: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    max_eval_steps: int = 100
    optimizer: str = "adamw"
    masked_lm_samples: int = 0
    dynamic_masking: bool = False
    do_whole_word_mask: bool = False  # dynamic masking only
    word_segmenter: str = "none"  # with whole-word masking: "jieba" or "rjieba" group Chinese words
    next_sentence_prediction: bool = True  # False: masked LM alone, on packed text
    vocab_file: str | None = None
    do_lower_case: bool = True
    dtype: str = "float32"
    jit_compile: bool = False
    log_every: int | None = None  # None: every --iterations_per_loop steps (`log_interval`)
    keep_checkpoint_max: int = 5
    random_seed: int | None = 12345
    verbose: bool = True


def _distributed_dataset(
    strategy, files, global_batch_size, options, is_training, vocab_size, step=0
):
    """The input of `strategy`; for eval, --max_eval_steps global batches. For training, the seed is
    --random_seed plus the global `step` it starts at, so that a resumed run draws a new order
    instead of replaying the first batches."""
    seed = (
        None if options.random_seed is None else options.random_seed + (step if is_training else 0)
    )

    def dataset_fn(context):
        # `files` are text corpora; an endless stream. Both take the global batch.
        if options.dynamic_masking:
            dataset = dynamic_masking.dynamic_masking_dataset(
                files,
                options.vocab_file,
                options.do_lower_case,
                global_batch_size,
                options.max_seq_length,
                options.max_predictions_per_seq,
                seed=seed,
                input_context=context,
                do_whole_word_mask=options.do_whole_word_mask,
                word_segmenter=options.word_segmenter,
                next_sentence_prediction=options.next_sentence_prediction,
            )
        else:
            dataset = pretraining_dataset.pretraining_dataset(
                files,
                global_batch_size,
                options.max_seq_length,
                options.max_predictions_per_seq,
                vocab_size=vocab_size,
                is_training=is_training,
                input_context=context,
                seed=seed,
                next_sentence_prediction=options.next_sentence_prediction,
            )
        return (
            dataset
            if is_training
            else dataset.take(_pipeline_batches(context, options.max_eval_steps))
        )

    return strategy.distribute_datasets_from_function(dataset_fn)


def _pipeline_batches(context: tf.distribute.InputContext, global_batches: int) -> int:
    """The per-replica batches one input pipeline yields for `global_batches` global batches:
    each global batch takes one from every replica the pipeline feeds."""
    return global_batches * context.num_replicas_in_sync // context.num_input_pipelines


def build_model(config: BertConfig, options: PretrainingOptions, strategy):
    """Builds the pretrainer and its optimizer under the strategy's scope, both built."""
    with strategy.scope():
        if options.random_seed is not None:
            keras.utils.set_random_seed(options.random_seed)
        model = BertPretrainer(
            BertEncoder.from_bert_config(config),
            masked_lm_samples=options.masked_lm_samples,
            next_sentence_prediction=options.next_sentence_prediction,
        )
        model.build_with_dummy_inputs()
        optimizer = optimization.create_optimizer(
            options.optimizer,
            options.learning_rate,
            options.num_train_steps,
            options.num_warmup_steps,
            loss_scale=options.dtype == "float16",
        )
        optimizer.build(model.trainable_variables)
    return model, optimizer


def resolve_config(options: PretrainingOptions) -> tuple[BertConfig, str]:
    """(config, where it comes from, for errors): --bert_config_file; without it, the
    bert_config.json of the --output_dir being resumed, else the config stored with
    --init_checkpoint (as the fine-tuning scripts do)."""
    if options.bert_config_file:
        return (
            BertConfig.from_json_file(options.bert_config_file),
            f"`bert_config_file`={options.bert_config_file}",
        )
    saved = os.path.join(options.output_dir, CONFIG_FILE)
    if tf.train.latest_checkpoint(options.output_dir) and tf.io.gfile.exists(saved):
        return (
            BertConfig.from_json_file(saved),
            f"{saved} (no `bert_config_file`: the resumed `output_dir`'s)",
        )
    if not options.init_checkpoint:
        raise UserInputError(
            "`bert_config_file` is required without `init_checkpoint` or an `output_dir` to resume"
        )
    return (
        resolve_bert_config(None, options.init_checkpoint),
        f"`init_checkpoint`={options.init_checkpoint}'s config (no `bert_config_file`)",
    )


def run_pretraining(
    options: PretrainingOptions, strategy: tf.distribute.Strategy
) -> dict[str, float]:
    """Trains and/or evaluates; returns the eval metrics (or the last train metrics)."""
    config, config_source = resolve_config(options)
    config.check_seq_length(options.max_seq_length)
    if options.masked_lm_samples >= config.vocab_size:
        raise UserInputError(
            f"`masked_lm_samples`={options.masked_lm_samples} is not below the "
            f"vocab_size {config.vocab_size} of {config_source}: 0 scores the "
            "whole vocab exactly, and faster"
        )
    if not (options.do_train or options.do_eval):
        raise UserInputError("at least one of `do_train` and `do_eval` must be set")
    if not (
        options.do_train
        or options.init_checkpoint
        or tf.train.latest_checkpoint(options.output_dir)
    ):
        raise UserInputError(
            "`do_eval` without `do_train` needs `init_checkpoint` or a "
            f"pretrained `output_dir`: {options.output_dir} has no checkpoint"
        )
    if options.do_train:
        log_interval(options)  # refuses a --log_every below --iterations_per_loop
    distribution.check_global_batch("train_batch_size", options.train_batch_size, strategy)
    distribution.check_global_batch("eval_batch_size", options.eval_batch_size, strategy)
    train_files, eval_files = _expand_inputs(options)
    _check_whole_word_mask(options)
    if options.dynamic_masking:
        if not options.vocab_file:
            raise UserInputError("`dynamic_masking` needs `vocab_file`")
        config.check_vocab_size(len(Vocab.from_file(options.vocab_file)), options.vocab_file)
    # Every input is checked before training: a bad --eval_file must not wait for the end of it.
    inputs = {"input_file": train_files} if options.do_train else {}
    if options.do_eval:
        inputs.setdefault(_eval_flag(options), eval_files)
    for flag, files in inputs.items():
        if options.dynamic_masking:
            corpus.check_corpus(files, flag)
        else:
            for path in files:
                pretraining_dataset.check_record_lengths(
                    path,
                    options.max_seq_length,
                    options.max_predictions_per_seq,
                    options.next_sentence_prediction,
                )
    if options.do_eval and not options.dynamic_masking:  # the text stream is endless
        _check_one_eval_batch(options, eval_files)

    with (
        _output_dir(options.output_dir) if workers.is_chief(strategy) else contextlib.nullcontext()
    ):
        return _train_and_evaluate(
            config, config_source, options, strategy, train_files, eval_files
        )


def _check_whole_word_mask(options: PretrainingOptions) -> None:
    """Raises UserInputError for --do_whole_word_mask or --word_segmenter where they can't apply."""
    if options.do_whole_word_mask and not options.dynamic_masking:
        raise UserInputError(
            "`do_whole_word_mask` needs `dynamic_masking`: TFRecords are masked "
            "when create_pretraining_data.py writes them (pass it there)"
        )
    if options.word_segmenter != "none":
        if not options.do_whole_word_mask:
            raise UserInputError(
                f"`word_segmenter`={options.word_segmenter} needs `do_whole_word_mask`"
            )
        try:
            word_segmentation.segmenter(options.word_segmenter)
        except word_segmentation.SegmenterError as error:
            raise UserInputError(f"`word_segmenter`: {error}") from None


def log_interval(options: PretrainingOptions) -> int:
    """The steps between metric logs: --log_every, by default --iterations_per_loop.

    Metrics are read on the host, between loops, so a --log_every below
    --iterations_per_loop would shorten every loop: it is refused instead. A larger one
    that is not a multiple ends a loop early at each log.

    Args:
        options: the run's options.

    Returns:
        The interval, in optimizer steps.
    """
    if options.log_every is None:
        return options.iterations_per_loop
    if options.log_every < options.iterations_per_loop:
        raise UserInputError(
            f"`log_every`={options.log_every} is below "
            f"`iterations_per_loop`={options.iterations_per_loop}: metrics are "
            "read between loops; leave `log_every` out to log after each loop, "
            "or lower `iterations_per_loop`"
        )
    return options.log_every


def _output_dir(output_dir: str):
    """Claims `output_dir` for the chief's run (`output_kinds.claimed`: one run at a time, none of
    another kind), creating it; if the run fails before its first checkpoint, what the run created
    is removed again: a bad input found by the first step (a token id outside the vocab) leaves
    nothing behind."""
    return output_kinds.claimed(
        output_dir,
        "output_dir",
        output_kinds.PRETRAINING,
        keep=lambda: bool(tf.train.latest_checkpoint(output_dir)),
    )


def _expand_inputs(options: PretrainingOptions) -> tuple[list[str], list[str]]:
    """(train files, eval files), each `[]` when that part does not run: a flag the run does not
    read is not expanded (an eval-only run with --eval_file needs no --input_file)."""
    eval_flag = _eval_flag(options)
    read = [
        flag
        for flag, runs in (("input_file", options.do_train), (eval_flag, options.do_eval))
        if runs
    ]
    if "input_file" in read and not options.input_file:
        raise UserInputError(
            "`input_file` is required to train, and to evaluate without `eval_file`"
        )
    files = {flag: corpus.expand_input_files(getattr(options, flag), flag) for flag in read}
    return (files["input_file"] if options.do_train else []), (
        files[eval_flag] if options.do_eval else []
    )


def _eval_flag(options: PretrainingOptions) -> str:
    """The flag that names the eval records: --eval_file, else --input_file."""
    return "eval_file" if options.eval_file else "input_file"


def _check_one_eval_batch(options: PretrainingOptions, eval_files: list[str]) -> None:
    """Refuses eval records that fill no batch: the eval drops a partial batch (static shapes)."""
    flag = _eval_flag(options)
    records = tf.data.TFRecordDataset(eval_files).take(options.eval_batch_size)
    count = pretraining_dataset.input_errors_named(
        lambda: int(records.reduce(0, lambda n, _: n + 1)), flag, getattr(options, flag)
    )
    if count < options.eval_batch_size:
        raise UserInputError(
            f"`eval_batch_size`={options.eval_batch_size} is more than the "
            f"{count} examples of `{flag}`: the eval would see no full batch"
        )


def _train_and_evaluate(
    config: BertConfig,
    config_source: str,
    options: PretrainingOptions,
    strategy,
    train_files: list[str],
    eval_files: list[str],
) -> dict[str, float]:
    """Every worker resumes from --output_dir; only the chief writes there (`_saving_manager`)."""
    chief = workers.is_chief(strategy)
    # not an eval-only run: it may share --output_dir with a training one
    if chief and options.do_train:
        for leftover in io_utils.remove_interrupted_checkpoint_saves(options.output_dir):
            logging.info("Removed %s, left by an interrupted checkpoint save", leftover)
    model, optimizer = build_model(config, options, strategy)
    manager = tf.train.CheckpointManager(
        checkpoints.pretraining_checkpoint(model, optimizer),
        options.output_dir,
        max_to_keep=options.keep_checkpoint_max,
        step_counter=optimizer.iterations,
    )
    checkpoints.check_resumable(manager, model, config_source, options.do_train)
    checkpoints.restore_or_initialize(
        manager, model, options.init_checkpoint, config_source, options.do_train
    )
    workers.check_same_resume_step(strategy, int(optimizer.iterations.numpy()), options.output_dir)
    if chief:
        # beside the checkpoints, so that they load with no --bert_config_file (export_model.py,
        # convert)
        config.to_json_file(os.path.join(options.output_dir, CONFIG_FILE))
    runner = PretrainingRunner(
        strategy, model, optimizer, options.train_batch_size, jit_compile=options.jit_compile
    )

    results = {}
    if options.do_train:
        dataset = _distributed_dataset(
            strategy,
            train_files,
            options.train_batch_size,
            options,
            is_training=True,
            vocab_size=config.vocab_size,
            step=int(optimizer.iterations.numpy()),
        )
        with _saving_manager(manager, strategy) as saver:
            results = _train(runner, iter(dataset), saver, options)
    if options.do_eval:
        dataset = _distributed_dataset(
            strategy,
            eval_files,
            options.eval_batch_size,
            options,
            is_training=False,
            vocab_size=config.vocab_size,
        )
        flag = _eval_flag(options)
        results = pretraining_dataset.input_errors_named(
            lambda: runner.evaluate(dataset), flag, getattr(options, flag)
        )
        results["global_step"] = int(optimizer.iterations.numpy())
        if chief:
            write_eval_results(options.output_dir, results)
            _write_scalars(
                tf.summary.create_file_writer(os.path.join(options.output_dir, "eval")),
                results,
                results["global_step"],
            )
        logging.info("Eval results: %s", results)
    return results


@contextlib.contextmanager
def _saving_manager(manager: tf.train.CheckpointManager, strategy):
    """The manager this worker saves with: `manager` on the chief; on the other workers, one that
    saves into their own temporary directories (`workers.writing_directory`)."""
    with workers.writing_directory(strategy, manager.directory) as directory:
        yield (
            manager
            if directory == manager.directory
            else tf.train.CheckpointManager(manager.checkpoint, directory, max_to_keep=1)
        )


# Consecutive steps skipped for non-finite gradients after which a --dtype=float16 run stops: the
# loss scale has then been halved as many times, so the loss itself is not finite.
_MAX_SKIPPED_STEPS = 100


def _train(runner: PretrainingRunner, iterator, manager, options: PretrainingOptions) -> dict:
    """Trains to --num_train_steps optimizer updates, logging and checkpointing on the way."""
    optimizer = runner.optimizer
    step = int(optimizer.iterations.numpy())
    if step >= options.num_train_steps:
        logging.info("Already trained to step %d", step)
        return {}
    writer = (
        tf.summary.create_file_writer(os.path.join(options.output_dir, "train"))
        if runner.strategy.extended.should_save_summary
        else tf.summary.create_noop_writer()
    )
    # Every figure is the last window's, shown as it is (stateful), not averaged over the run.
    shown = [m.name for m in runner.model.pretraining_metrics] + [
        "loss",
        "learning_rate",
        "examples_per_second",
    ]
    bar = options.verbose and console.on_terminal()  # else a log line a window
    progress = keras.utils.Progbar(
        options.num_train_steps, verbose=1 if bar else 0, stateful_metrics=shown
    )
    progress.update(step)
    results = {}
    window_start, window_steps, skipped = time.perf_counter(), 0, 0
    log_every = log_interval(options)
    while step < options.num_train_steps:
        log_at = _next_multiple(step, log_every)
        save_at = _next_multiple(step, options.save_checkpoints_steps)
        num_steps = (
            min(options.num_train_steps, log_at, save_at, step + options.iterations_per_loop) - step
        )
        pretraining_dataset.input_errors_named(
            lambda: runner.train(iterator, num_steps), "input_file", options.input_file
        )
        # The optimizer's count, not num_steps: a step the
        # loss scaler skips (--dtype=float16) updates nothing.
        updated = int(optimizer.iterations.numpy())
        skipped = 0 if updated > step else skipped + num_steps
        if skipped >= _MAX_SKIPPED_STEPS:
            raise UserInputError(
                f"`dtype`={options.dtype}: the last {skipped} steps all had "
                f"non-finite gradients (at step {step}); the loss is not finite "
                "whatever the loss scale"
            )
        step = updated
        window_steps += num_steps
        done = step == options.num_train_steps
        if step == log_at or done:
            elapsed = time.perf_counter() - window_start
            results = runner.metric_results()
            results["learning_rate"] = float(optimization.current_learning_rate(optimizer))
            results["examples_per_second"] = window_steps * options.train_batch_size / elapsed
            _write_scalars(writer, results, step)
            progress.update(step, [(k, v) for k, v in results.items()])
            if options.verbose and not bar:  # where the bar would be: stdout
                print(
                    f"Step {step} of {options.num_train_steps}: "
                    + ", ".join(f"{name} = {value:.4g}" for name, value in results.items()),
                    flush=True,
                )
            runner.reset_metrics()
            window_start, window_steps = time.perf_counter(), 0
        if step == save_at or done:
            checkpoints.save(manager, step)
    return results


def _write_scalars(writer, scalars: dict, step: int) -> None:
    with writer.as_default(step=step):
        for name, value in scalars.items():
            tf.summary.scalar(name, value)
    writer.flush()


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every
