"""`run_finetuning`: the training, evaluation, prediction and export all task scripts share.

Training: `model.fit` over the shuffled training split in static batches,
`iterations_per_loop` of them per `tf.function` call, AdamW with warmup and linear
decay (google-research/bert's), evaluation of `task.eval_splits` after each epoch,
and the best weights by `task.main_metric` kept in `output_dir/best`. A run killed
before its outputs are written and started again with the same options resumes from its
last backup (`output_dir/backup`, written at each epoch's end and every
`save_checkpoints_steps`, removed once the outputs are), at the step where it was
written: after training, it trains nothing.
Without `do_train`, the weights come from `init_checkpoint` or else from
`output_dir/best`; with neither, it refuses to evaluate an untrained model.
`do_eval` writes `eval_results.txt` for the best weights, `do_predict` the
task's prediction files, `export_dir` a SavedModel.

The chief claims `output_dir` for the run: a second run, or a directory of another kind,
is refused (`output_kinds.claimed`). Under MultiWorkerMirroredStrategy every worker runs
`run_finetuning` and resumes from `output_dir`, but only the chief writes there and to
`export_dir` (`workers.writing_directory`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Callable, Sequence

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import io_utils, output_kinds
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import load_init_checkpoint, resolve_bert_config
from bert_tf.checkpoints.loader import check_stored_config
from bert_tf.checkpoints.task_heads import checkpoint_heads, task_model_type
from bert_tf.errors import UserInputError
from bert_tf.finetuning.best_checkpoint import (
    BEST_DIR,
    BestCheckpoint,
    best_checkpoint_prefix,
    restore_model_checkpoint,
    save_model_checkpoint,
)
from bert_tf.finetuning.layer_depths import layer_depths
from bert_tf.finetuning.masked_lm_auxiliary import MaskedLMAuxiliary
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.finetuning.training_backup import BACKUP_DIR, TrainingBackup
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.training import distribution, optimization, workers
from bert_tf.training.eval_results import write_eval_results

# The flags that decide the batches, the learning rates and the loss: a resume must keep them.
RESUME_FLAGS = (
    "max_seq_length",
    "do_lower_case",
    "train_batch_size",
    "num_train_epochs",
    "learning_rate",
    "warmup_proportion",
    "google_bert_optimizer",
    "layerwise_lr_decay",
    "gradual_unfreezing",
    "label_smoothing",
    "mlm_aux_weight",
    "random_seed",
    "dtype",
)


def run_finetuning(
    task: FineTuningTask, options: FineTuningOptions, strategy: tf.distribute.Strategy | None = None
) -> dict[str, float]:
    """Fine-tunes, evaluates, predicts and exports, as `options` asks (module docstring).

    Args:
        task: the task: how to read and encode its data, its head and its metrics.
        options: the settings, one per fine-tuning flag.
        strategy: the distribution strategy; None: the current one.

    Returns:
        The eval metrics by name (empty without `do_eval`).

    Raises:
        UserInputError: bad options or data, an `output_dir` another run holds or of another
            kind, or nothing to evaluate but an untrained model.
    """
    strategy = strategy or tf.distribute.get_strategy()
    with (
        output_kinds.claimed(options.output_dir, "output_dir", output_kinds.FINE_TUNING)
        if workers.is_chief(strategy)
        else contextlib.nullcontext()
    ):
        return _run_finetuning(task, options, strategy)


def _run_finetuning(
    task: FineTuningTask, options: FineTuningOptions, strategy: tf.distribute.Strategy
) -> dict[str, float]:
    config = _checked_request(task, options, strategy)
    train = task.encode("train") if options.do_train else None
    eval_splits = _encode(task, task.eval_splits) if options.do_eval else {}
    predict_splits = _encode(task, task.predict_splits, eval_splits) if options.do_predict else {}
    steps_per_epoch, epochs = _schedule(options, train)
    model, task_model = _build(task, options, config, strategy, steps_per_epoch, epochs)
    if workers.is_chief(strategy):  # the others write into directories of their own
        # only now: bad inputs or flags leave no directory
        io_utils.make_directory(options.output_dir, "output_dir")

    with workers.writing_directory(strategy, options.output_dir) as directory:
        written = _written_to(options, directory)
        backup = None
        if options.do_train:
            evaluate = (
                (lambda: _score(task, task_model, eval_splits, options)[0])
                if options.do_eval
                else None
            )
            backup = _train(
                model,
                task,
                task_model,
                train,
                steps_per_epoch,
                epochs,
                written,
                strategy,
                evaluate,
                resume_from=options.output_dir,
            )
        if options.do_train or not options.init_checkpoint:
            _restore_best(task_model, written, options.output_dir)

        results, eval_outputs = _score(task, task_model, eval_splits, options)
        if options.do_eval:
            write_eval_results(written.output_dir, results)
            print("Eval results: " + ", ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())))
        _write_predictions(task, task_model, predict_splits, eval_outputs, written)
        if written.export_dir:
            # the export stack loads only when asked
            from bert_tf.export import export_task_model, with_weights_in

            # A --dtype=bfloat16 run exports bfloat16 weights:
            # its mixed-precision model would cast them per call.
            export_task_model(
                with_weights_in(task_model, options.dtype),
                written.export_dir,
                tokenizer=task.tokenizer,
                seq_length=options.max_seq_length,
                **task.export_options(),
            )
            print(f"Exported a SavedModel to {written.export_dir}")
        if backup is not None:
            backup.remove()  # only now: a run killed before its outputs resumes after its training
    return results


def _written_to(options: FineTuningOptions, directory: str) -> FineTuningOptions:
    """`options` as this worker writes: to `directory` (`workers.writing_directory`), export too."""
    if directory == options.output_dir:
        return options
    export_dir = options.export_dir and os.path.join(directory, "export")
    return dataclasses.replace(options, output_dir=directory, export_dir=export_dir)


def _checked_request(task: FineTuningTask, options: FineTuningOptions, strategy) -> BertConfig:
    """Refuses, before any work, what cannot run; returns the encoder's config."""
    if not (options.do_train or options.do_eval or options.do_predict):
        raise UserInputError("at least one of `do_train`, `do_eval` and `do_predict` must be set")
    # Without training or --init_checkpoint, the weights and their config come from output_dir/best.
    starting = task.starting_checkpoint
    if not options.do_train and starting is None:
        raise UserInputError(
            "`do_eval` and `do_predict` without `do_train` need "
            "`init_checkpoint` or a fine-tuned `output_dir`: "
            f"{options.output_dir} has no {BEST_DIR}/ checkpoint"
        )
    for flag in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
        distribution.check_global_batch(flag, getattr(options, flag), strategy)
    if options.do_train:
        _check_iterations_per_loop(options.iterations_per_loop, strategy)
    config = resolve_bert_config(options.bert_config_file, starting)
    config.check_seq_length(options.max_seq_length)
    config.check_vocab_size(len(task.tokenizer.vocab), options.vocab_file)
    if options.export_dir:
        # the export stack loads only when asked
        from bert_tf.export.saved_model_writer import check_export_dir

        check_export_dir(options.export_dir)  # before training, not after it
    return config


def _check_iterations_per_loop(iterations: int, strategy) -> None:
    """Refuses --iterations_per_loop > 1 where Keras's `fit` fails with `steps_per_execution` > 1:
    several replicas under a strategy other than a TPU's (MirroredStrategy's)."""
    replicas = strategy.num_replicas_in_sync
    if iterations > 1 and replicas > 1 and not isinstance(strategy, tf.distribute.TPUStrategy):
        raise UserInputError(
            f"`iterations_per_loop`={iterations} needs one "
            "replica or a TPU: Keras cannot run several "
            f"steps per call under {type(strategy).__name__} "
            f"with {replicas} replicas; leave it at 1"
        )


def _build(
    task: FineTuningTask,
    options: FineTuningOptions,
    config: BertConfig,
    strategy,
    steps_per_epoch: int,
    epochs: int,
) -> tuple[keras.Model, keras.Model]:
    """(the model that trains, the task model), compiled under the strategy's scope and initialised
    from --init_checkpoint; the first wraps the second
    in `MaskedLMAuxiliary` for --mlm_aux_weight."""
    with strategy.scope():
        if options.random_seed is not None:
            keras.utils.set_random_seed(options.random_seed)
        task_model = task.build_model(BertEncoder.from_bert_config(config))
        model = task_model
        if options.mlm_aux_weight:
            model = MaskedLMAuxiliary(
                task_model, task.tokenizer.vocab, options.mlm_aux_weight, seed=options.random_seed
            )
        model.build_with_dummy_inputs()
        _initialize(model, task, task_model, options)
        encoder, total_steps = task_model.encoder, steps_per_epoch * epochs
        optimizer = optimization.create_finetuning_optimizer(
            options.learning_rate,
            total_steps,
            int(total_steps * options.warmup_proportion),
            layer_depths(encoder),
            encoder.num_hidden_layers,
            options.layerwise_lr_decay,
            unfreeze_every_steps=(
                max(1, steps_per_epoch // (encoder.num_hidden_layers + 1))
                if options.gradual_unfreezing
                else 0
            ),
            loss_scale=options.dtype == "float16",
            google_bert=options.google_bert_optimizer,
        )
        model.compile(
            optimizer=optimizer,
            loss=task.loss(options.label_smoothing),
            jit_compile=options.jit_compile,
            steps_per_execution=options.iterations_per_loop,
        )
        # else the train step's first trace builds it, and is retraced
        optimizer.build(model.trainable_variables)
    workers.fit_across_workers(model, strategy)
    return model, task_model


def _schedule(options: FineTuningOptions, train: EncodedSplit | None) -> tuple[int, int]:
    """(steps per epoch, epochs): fractional --num_train_epochs become whole, equal epochs."""
    if train is None:
        return 1, 1
    if not options.num_train_epochs > 0:  # NaN too
        raise UserInputError(f"`num_train_epochs` must be positive, got {options.num_train_epochs}")
    if len(train) < options.train_batch_size:
        raise UserInputError(
            f"the training set has {train.size_text()}, fewer than "
            f"`train_batch_size`={options.train_batch_size}"
        )
    epochs = max(1, math.ceil(options.num_train_epochs))
    total = len(train) * options.num_train_epochs / options.train_batch_size
    return max(1, round(total / epochs)), epochs


def _resume_settings(
    options: FineTuningOptions, train: EncodedSplit, labels: Sequence[str] | None
) -> dict[str, object]:
    """What a resumed run must share with the interrupted one, named as the user reads it: the
    schedule's flags, and the training data as encoded (any other task, file, column, language
    or vocab changes its digest) with its class names."""
    return {
        "the training set size": len(train),
        "the training data's digest": train.digest(),
        "the labels": None if labels is None else list(labels),
        **{f"--{flag}": getattr(options, flag) for flag in RESUME_FLAGS},
    }


def _initialize(model, task: FineTuningTask, task_model, options: FineTuningOptions) -> None:
    """Loads --init_checkpoint into `model`, and the
    task's head where the checkpoint has one that fits.

    Otherwise training starts the head fresh, with a warning where the checkpoint has a head
    that does not fit (none at all is the usual pretrained checkpoint); a run without
    --do_train would score an untrained head, so it is refused.
    """
    if not options.init_checkpoint:
        return
    report = load_init_checkpoint(task.starting_checkpoint, model)
    heads = checkpoint_heads(report)
    problem = task.load_head(task_model, heads)
    if problem is None:
        logging.info("--init_checkpoint: loaded its %s head", task_model_type(task_model))
        return
    if not options.do_train:
        raise UserInputError(_untrained_head_error(options, problem))
    log = logging.warning if task_model_type(task_model) in heads else logging.info
    log("--init_checkpoint: %s; the head starts fresh", problem)


def _untrained_head_error(options: FineTuningOptions, problem: str) -> str:
    """Why a run without --do_train refuses an --init_checkpoint's unusable head; what to do."""
    remedies = ["fine-tune it with `do_train`", "use a checkpoint fine-tuned for this task"]
    if best_checkpoint_prefix(options.output_dir):
        best = os.path.join(options.output_dir, BEST_DIR)
        remedies.append(f"leave out `init_checkpoint` to use {best}")
    return (
        f"`init_checkpoint`={options.init_checkpoint}: {problem}, so this run would score an "
        f"untrained head; {', '.join(remedies[:-1])}, or {remedies[-1]}"
    )


def _main_metric_name(task: FineTuningTask) -> str:
    return _metric_key(task.eval_splits, task.eval_splits[0], task.main_metric)


def _metric_key(splits, split: str, metric: str) -> str:
    return metric if len(splits) == 1 else f"{split}_{metric}"


def _encode(
    task: FineTuningTask, splits, encoded: dict[str, EncodedSplit] | None = None
) -> dict[str, EncodedSplit]:
    """Each split encoded by the task, reusing the splits already in `encoded`."""
    encoded = encoded or {}
    return {split: encoded[split] if split in encoded else task.encode(split) for split in splits}


def _predict(
    task_model, encoded: EncodedSplit, batch_size: int, verbose: int
) -> dict[str, np.ndarray]:
    """The model's outputs on `encoded`, one batch per call: Keras would unroll
    --iterations_per_loop predict steps into one graph."""
    compiled, task_model.steps_per_execution = task_model.steps_per_execution, 1
    try:
        return task_model.predict(encoded.features, batch_size=batch_size, verbose=verbose)
    finally:
        task_model.steps_per_execution = compiled


def _score(
    task: FineTuningTask, task_model, splits: dict[str, EncodedSplit], options: FineTuningOptions
) -> tuple[dict[str, float], dict[str, dict]]:
    """(the task's metrics on each split, keyed `<split>_<metric>` when there are several splits,
    the model's outputs on each split)."""
    outputs = {
        split: _predict(task_model, encoded, options.eval_batch_size, options.verbose)
        for split, encoded in splits.items()
    }
    results = {}
    for split, encoded in splits.items():
        metrics = task.evaluate(split, encoded, outputs[split])
        results.update({_metric_key(splits, split, k): float(v) for k, v in metrics.items()})
    return results, outputs


def _write_predictions(
    task: FineTuningTask,
    task_model,
    splits: dict[str, EncodedSplit],
    eval_outputs: dict[str, dict],
    options: FineTuningOptions,
) -> None:
    """The task's prediction files for `splits`, from the outputs just evaluated where there are
    some (SQuAD predicts its dev file)."""
    for split, encoded in splits.items():
        outputs = eval_outputs.get(split)
        if outputs is None:
            outputs = _predict(task_model, encoded, options.predict_batch_size, options.verbose)
        for path in task.write_predictions(split, encoded, outputs, options.output_dir):
            print(f"Wrote {path}")


def _train(
    model,
    task: FineTuningTask,
    task_model,
    train: EncodedSplit,
    steps_per_epoch: int,
    epochs: int,
    options: FineTuningOptions,
    strategy,
    evaluate: Callable[[], dict[str, float]] | None,
    resume_from: str,
) -> TrainingBackup:
    """Trains from the step the backup in `resume_from` (the run's --output_dir) holds (0 for a new
    run); returns the backup, for the caller to remove once the run's outputs are written.

    With `evaluate` (--do_eval), each epoch ends with it and the best weights are kept in
    `options.output_dir/best`; without, the last weights are.
    """
    labels = task.export_options().get("labels")  # the class names, saved beside the checkpoint
    backup = TrainingBackup(
        model,
        os.path.join(options.output_dir, BACKUP_DIR),
        options.save_checkpoints_steps,
        _resume_settings(options, train, labels),
        os.path.join(resume_from, BACKUP_DIR),
    )
    with strategy.scope():  # the optimizer's slots are built where its variables live
        resume = backup.restore(_config_source(options)) > 0
    workers.check_same_resume_step(strategy, backup.step, backup.restore_from)
    callbacks = [backup, keras.callbacks.TensorBoard(os.path.join(options.output_dir, "logs"))]
    best = None
    if evaluate is not None:
        best = BestCheckpoint(
            task_model,
            options.output_dir,
            evaluate,
            _main_metric_name(task),
            backup.run_id,
            resume,
            labels,
            resume_from,
        )
        callbacks.append(best)
    print(
        f"Fine-tuning on {train.size_text()}: {epochs} epoch(s) of {steps_per_epoch} steps, "
        f"batch {options.train_batch_size}"
    )
    if backup.step:
        total = steps_per_epoch * epochs
        where = (
            f"epoch {backup.step // steps_per_epoch + 1}"
            if backup.step < total
            else "training done"
        )
        print(
            f"Resuming the interrupted run saved in {backup.restore_from} at step {backup.step} "
            f"of {total} ({where}); delete that directory to start over instead"
        )
        epoch, steps_into_it = divmod(backup.step, steps_per_epoch)
        # an epoch's end, whose evaluation a crash may have cut short
        if best is not None and not steps_into_it:
            best.evaluate_epoch(epoch)
    for epoch, steps, first_step in _fits(backup.step, steps_per_epoch, epochs):
        model.fit(
            _training_dataset(train, options, first_step, steps),
            initial_epoch=epoch,
            epochs=epoch + 1,
            steps_per_epoch=steps,
            callbacks=_callback_list(callbacks, model, options.verbose, epochs, steps),
            verbose=options.verbose,
            shuffle=False,
        )
    if evaluate is None:
        save_model_checkpoint(
            task_model, os.path.join(options.output_dir, BEST_DIR), {"epoch": epochs}, labels
        )
    return backup


def _training_dataset(
    train: EncodedSplit, options: FineTuningOptions, first_step: int, steps: int
) -> tf.data.Dataset:
    """The shuffled training batches of global steps `first_step` to `first_step + steps`: with a
    seed, a resumed run gets the batches the interrupted one would have had."""
    parts = (train.features, train.labels)
    if train.sample_weight is not None:
        parts += (train.sample_weight,)
    return (
        tf.data.Dataset.from_tensor_slices(parts)
        .shuffle(len(train), seed=options.random_seed, reshuffle_each_iteration=True)
        .repeat()
        .skip(first_step * options.train_batch_size)
        .batch(options.train_batch_size, drop_remainder=True)
        .take(steps)
        .prefetch(tf.data.AUTOTUNE)
    )


def _fits(step: int, steps_per_epoch: int, epochs: int) -> list[tuple[int, int, int]]:
    """The `model.fit` calls that train from global step `step`, one per epoch: (epoch, steps, first
    step) each; a run resumed mid-epoch finishes that epoch first.

    Each call's data ends with its epoch: Keras runs all `steps_per_execution` steps of a call
    unless the data runs out, so only that ends an epoch's last call at the epoch's end.
    """
    fits = []
    for epoch in range(step // steps_per_epoch, epochs):
        first = max(step, epoch * steps_per_epoch)
        fits.append((epoch, (epoch + 1) * steps_per_epoch - first, first))
    return fits


def _callback_list(
    callbacks: list[keras.callbacks.Callback], model, verbose: int, epochs: int, steps: int
) -> keras.callbacks.CallbackList:
    """The callbacks of one epoch's `model.fit` call of `steps` steps, the progress bar counting the
    run's `epochs` (Keras's own would count the call's)."""
    return keras.callbacks.CallbackList(
        callbacks,
        add_history=True,
        add_progbar=verbose != 0,
        verbose=verbose,
        epochs=epochs,
        steps=steps,
        model=model,
    )


def _config_source(options: FineTuningOptions) -> str:
    """The run config's source, for errors: --bert_config_file, else the --init_checkpoint's."""
    if options.bert_config_file:
        return f"`bert_config_file`={options.bert_config_file}"
    return f"`init_checkpoint`={options.init_checkpoint}"


def _restore_best(task_model, options: FineTuningOptions, output_dir: str) -> None:
    """Restores the best checkpoint this worker wrote into
    `options.output_dir`, else `output_dir/best` (the run's --output_dir's),
    if there is one, refusing a --bert_config_file of another architecture."""
    prefix = best_checkpoint_prefix(options.output_dir) or best_checkpoint_prefix(output_dir)
    if prefix:
        check_stored_config(prefix, task_model, _config_source(options))
        restore_model_checkpoint(task_model, prefix)
        logging.info("Restored the best weights from %s", prefix)
