"""`run_multitask`: several fine-tuning tasks trained together on one shared encoder, one head each.

Each training step draws one task (`task_list.task_schedule`) and trains the encoder and that
task's head on one batch of its data. After each epoch every task is evaluated; the weights
with the best mean of the tasks' main metrics are kept, per task, as a single-task best
checkpoint (`output_dir/<task>/best`), which any task script's `--init_checkpoint` reads.
"""

from __future__ import annotations

import dataclasses
import math
import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf import io_utils, output_kinds
from bert_tf.checkpoints import load_init_checkpoint, resolve_bert_config, resolve_init_checkpoint
from bert_tf.errors import UserInputError
from bert_tf.finetuning.best_checkpoint import (
    BEST_DIR,
    best_checkpoint_prefix,
    read_best_metrics,
    restore_model_checkpoint,
    save_model_checkpoint,
)
from bert_tf.finetuning.driver import RESUME_FLAGS
from bert_tf.finetuning.layer_depths import layer_depths
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import EncodedSplit, FineTuningTask
from bert_tf.finetuning.training_backup import BACKUP_DIR, RUN_ID, TrainingBackup
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.multitask.task_list import TaskSpec, batch_rows, sampling_probabilities, task_schedule
from bert_tf.tokenization import BertTokenizer
from bert_tf.training import optimization
from bert_tf.training.eval_results import write_eval_results

MEAN_METRIC = "mean_main_metric"  # in each task's best/metrics.json


class MultiTaskModel(keras.Model):
    """The shared encoder and every task's model on it, as one model to optimise and back up."""

    def __init__(self, encoder: BertEncoder, task_models: dict[str, keras.Model]):
        super().__init__()
        self.encoder = encoder
        self.task_models = task_models


def build_task(
    spec: TaskSpec, options: FineTuningOptions, tokenizer: BertTokenizer
) -> FineTuningTask:
    """The single-task scripts' task for `spec`, on `spec.data_dir`, into `output_dir/<name>`."""
    from bert_tf.tasks.multiple_choice import MultipleChoiceTask
    from bert_tf.tasks.question_answering import SquadTask
    from bert_tf.tasks.sentence_prediction import SentencePredictionTask
    from bert_tf.tasks.tagging import TaggingTask

    task_options = dataclasses.replace(
        options, data_dir=spec.data_dir, output_dir=os.path.join(options.output_dir, spec.name)
    )
    if spec.kind == "classifier":
        return SentencePredictionTask(task_options, tokenizer, spec.name)
    return {"ner": TaggingTask, "squad": SquadTask, "multiple_choice": MultipleChoiceTask}[
        spec.kind
    ](task_options, tokenizer)


def run_multitask(
    specs: list[TaskSpec],
    options: FineTuningOptions,
    tokenizer: BertTokenizer,
    sampling: str = "proportional",
    temperature: float = 1.0,
) -> dict[str, dict[str, float]]:
    """Trains (`--do_train`), evaluates (`--do_eval`)
    and exports (`--export_dir/<task>`) every task.

    Without `--do_eval` the last weights are kept. A run killed during training and started
    again with the same flags resumes from `output_dir/backup`. Without `--do_train`, the
    weights come from each task's `output_dir/<task>/best`.

    The run claims `output_dir`: a second run, or a directory of another kind, is refused
    (`output_kinds.claimed`).

    Returns each task's eval metrics by task name (empty without `--do_eval`).
    """
    with output_kinds.claimed(options.output_dir, "output_dir", output_kinds.FINE_TUNING):
        return _run_multitask(specs, options, tokenizer, sampling, temperature)


def _run_multitask(
    specs: list[TaskSpec],
    options: FineTuningOptions,
    tokenizer: BertTokenizer,
    sampling: str,
    temperature: float,
) -> dict[str, dict[str, float]]:
    if not (options.do_train or options.do_eval):
        raise UserInputError("at least one of `do_train` and `do_eval` must be set")
    tasks = {spec.name: build_task(spec, options, tokenizer) for spec in specs}
    restored = (
        None
        if options.do_train
        else best_checkpoint_prefix(tasks[specs[0].name].options.output_dir)
    )
    if not (options.do_train or restored):
        raise UserInputError(
            f"`do_eval` without `do_train` needs a multi-task `output_dir`: "
            f"{options.output_dir}/{specs[0].name} has no {BEST_DIR}/ checkpoint"
        )
    # The checkpoint that gives the config, and the weights to train from.
    starting = resolve_init_checkpoint(restored or options.init_checkpoint)
    config = resolve_bert_config(options.bert_config_file, starting)
    config.check_seq_length(options.max_seq_length)
    config.check_vocab_size(len(tokenizer.vocab), options.vocab_file)
    if options.export_dir:
        # the export stack loads only when asked
        from bert_tf.export.saved_model_writer import check_export_dir

        for name in tasks:
            check_export_dir(os.path.join(options.export_dir, name))
    train = {name: task.encode("train") for name, task in tasks.items()} if options.do_train else {}
    evals = (
        {
            name: {split: task.encode(split) for split in task.eval_splits}
            for name, task in tasks.items()
        }
        if options.do_eval
        else {}
    )

    if options.random_seed is not None:
        keras.utils.set_random_seed(options.random_seed)
    encoder = BertEncoder.from_bert_config(config)
    models = {name: task.build_model(encoder) for name, task in tasks.items()}
    for model in models.values():
        model.build_with_dummy_inputs()
    if options.init_checkpoint and options.do_train:
        load_init_checkpoint(starting, encoder)
    io_utils.make_directory(options.output_dir, "output_dir")

    backup = None
    if options.do_train:
        backup = train_tasks(specs, tasks, models, train, evals, options, sampling, temperature)
    for name, task in tasks.items():
        prefix = best_checkpoint_prefix(task.options.output_dir)
        if prefix:
            restore_model_checkpoint(models[name], prefix)
    results = _evaluate(tasks, models, evals, options) if options.do_eval else {}
    for name, metrics in results.items():
        write_eval_results(tasks[name].options.output_dir, metrics)
        print(
            f"Eval results of {name}: "
            + ", ".join(f"{k} {v:.4f}" for k, v in sorted(metrics.items()))
        )
    if options.export_dir:
        from bert_tf.export import export_task_model  # the export stack loads only when asked

        for name, task in tasks.items():
            path = os.path.join(options.export_dir, name)
            export_task_model(
                models[name],
                path,
                tokenizer=tokenizer,
                seq_length=options.max_seq_length,
                **task.export_options(),
            )
            print(f"Exported {name} to {path}")
    if backup is not None:
        backup.remove()  # only now: a run killed before its outputs resumes after its training
    return results


def _main_metric_key(task: FineTuningTask) -> str:
    return _metric_key(task.eval_splits, task.eval_splits[0], task.main_metric)


def _metric_key(splits, split: str, metric: str) -> str:
    return metric if len(splits) == 1 else f"{split}_{metric}"


def _evaluate(
    tasks: dict[str, FineTuningTask],
    models: dict[str, keras.Model],
    evals: dict[str, dict[str, EncodedSplit]],
    options: FineTuningOptions,
) -> dict[str, dict[str, float]]:
    """Each task's metrics on its eval splits, keyed `<split>_<metric>` where it has several."""
    results = {}
    for name, task in tasks.items():
        results[name] = {}
        for split, encoded in evals[name].items():
            outputs = models[name].predict(
                encoded.features, batch_size=options.eval_batch_size, verbose=0
            )
            metrics = task.evaluate(split, encoded, outputs)
            results[name].update(
                {_metric_key(evals[name], split, k): float(v) for k, v in metrics.items()}
            )
    return results


def _mean_main_metric(
    tasks: dict[str, FineTuningTask], results: dict[str, dict[str, float]]
) -> float:
    return float(np.mean([results[name][_main_metric_key(task)] for name, task in tasks.items()]))


def _train_step(task_model: keras.Model, losses: dict, optimizer, jit_compile: bool):
    """One step on a batch of one task: its loss, and the gradients of the encoder and its head."""

    # no tensor-dependent Python control flow
    @tf.function(jit_compile=jit_compile, autograph=False)
    def step(features, labels, sample_weight):
        with tf.GradientTape() as tape:
            outputs = task_model(features, training=True)
            loss = tf.add_n(
                [loss(labels[name], outputs[name], sample_weight) for name, loss in losses.items()]
            )
        variables = task_model.trainable_variables
        # None for what the task does not use (a tagger's pooler)
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(gradients, variables) if g is not None])
        return loss

    return step


def _rows(encoded: EncodedSplit, rows: np.ndarray):
    """(features, labels, sample weights) of `rows` of a split."""

    def take(values):
        return None if values is None else tf.nest.map_structure(lambda array: array[rows], values)

    return take(encoded.features), take(encoded.labels), take(encoded.sample_weight)


def train_tasks(
    specs: list[TaskSpec],
    tasks: dict[str, FineTuningTask],
    models: dict[str, keras.Model],
    train: dict[str, EncodedSplit],
    evals: dict[str, dict[str, EncodedSplit]],
    options: FineTuningOptions,
    sampling: str,
    temperature: float,
) -> TrainingBackup:
    """Trains the task `models` (by task name, on one encoder) from the step the backup in
    `output_dir/backup` holds (0 for a new run), evaluating after each epoch where `evals` has
    the tasks' eval splits; returns the backup, for the caller to remove once the run's outputs
    are written."""
    batch = options.train_batch_size
    for spec in specs:
        if spec.weight > 0 and len(train[spec.name]) < batch:
            raise UserInputError(
                f"`tasks`: {spec.name}'s training set has "
                f"{train[spec.name].size_text()}, fewer than "
                f"`train_batch_size`={batch}"
            )
    if not options.num_train_epochs > 0:
        raise UserInputError(f"`num_train_epochs` must be positive, got {options.num_train_epochs}")
    names = [spec.name for spec in specs]
    probabilities = sampling_probabilities(
        [len(train[name]) for name in names], [s.weight for s in specs], sampling, temperature
    )
    epochs = max(1, math.ceil(options.num_train_epochs))
    sampled_steps = (
        sum(len(train[s.name]) / batch for s in specs if s.weight > 0) * options.num_train_epochs
    )
    steps_per_epoch = max(1, round(sampled_steps / epochs))
    total_steps = steps_per_epoch * epochs
    schedule = task_schedule(probabilities, total_steps, options.random_seed)
    uses = np.zeros(total_steps, np.int64)  # [steps]: how many earlier steps drew the same task
    seen = np.zeros(len(names), np.int64)
    for step, task_index in enumerate(schedule):
        uses[step], seen[task_index] = seen[task_index], seen[task_index] + 1

    encoder = next(iter(models.values())).encoder
    optimizer = optimization.create_finetuning_optimizer(
        options.learning_rate,
        total_steps,
        int(total_steps * options.warmup_proportion),
        layer_depths(encoder),
        encoder.num_hidden_layers,
        options.layerwise_lr_decay,
        google_bert=options.google_bert_optimizer,
    )
    multi = MultiTaskModel(encoder, models)
    multi.compile(optimizer=optimizer)
    optimizer.build(multi.trainable_variables)
    steps = [
        _train_step(
            models[name], tasks[name].loss(options.label_smoothing), optimizer, options.jit_compile
        )
        for name in names
    ]

    settings = {
        "--tasks": ",".join(f"{s.name}:{s.kind}:{s.data_dir}:{s.weight}" for s in specs),
        "--task_sampling": sampling,
        "--sampling_temperature": temperature,
        **{f"{name}'s training data's digest": train[name].digest() for name in names},
        **{f"--{flag}": getattr(options, flag) for flag in RESUME_FLAGS},
    }
    backup = TrainingBackup(
        multi,
        os.path.join(options.output_dir, BACKUP_DIR),
        options.save_checkpoints_steps,
        settings,
    )
    start = backup.restore(_config_source(options))
    best = _read_best(tasks, backup.run_id) if start else None
    print(
        f"Multi-task fine-tuning of {', '.join(names)} (probabilities "
        f"{', '.join(f'{p:.2f}' for p in probabilities)}): {epochs} epoch(s) of {steps_per_epoch} "
        f"steps, batch {batch}"
    )
    if start:
        print(
            f"Resuming the interrupted run saved in {backup.directory} at step {start} of "
            f"{total_steps}; delete that directory to start over instead"
        )
        # an epoch's end, whose evaluation a kill may have cut short
        if evals and start % steps_per_epoch == 0:
            best = _keep_best(
                tasks, models, evals, options, start // steps_per_epoch, best, backup.run_id
            )
    for epoch in range(start // steps_per_epoch, epochs):
        first = max(start, epoch * steps_per_epoch)
        count = (epoch + 1) * steps_per_epoch - first
        backup.set_params({"steps": count})
        backup.on_epoch_begin(epoch)
        progress = keras.utils.Progbar(count, verbose=options.verbose)
        print(f"Epoch {epoch + 1}/{epochs}")
        for i, step in enumerate(range(first, first + count)):
            index = schedule[step]
            rows = batch_rows(
                len(train[names[index]]), batch, int(uses[step]), options.random_seed, int(index)
            )
            loss = steps[index](*_rows(train[names[index]], rows))
            progress.update(i + 1, [(f"{names[index]}_loss", float(loss))])
            backup.on_train_batch_end(i)
        backup.on_epoch_end(epoch)
        if evals:
            best = _keep_best(tasks, models, evals, options, epoch + 1, best, backup.run_id)
    if not evals:
        for name, task in tasks.items():
            save_model_checkpoint(
                models[name],
                os.path.join(task.options.output_dir, BEST_DIR),
                {"epoch": epochs},
                task.export_options().get("labels"),
            )
    return backup


def _read_best(tasks: dict[str, FineTuningTask], run_id: str) -> float | None:
    """The best mean main metric this run recorded before it was killed, or None."""
    recorded = [read_best_metrics(task.options.output_dir) for task in tasks.values()]
    if all(r and r.get(RUN_ID) == run_id and MEAN_METRIC in r for r in recorded):
        # a kill between the tasks' saves: the lower is sure
        return min(r[MEAN_METRIC] for r in recorded)
    return None


def _keep_best(
    tasks, models, evals, options: FineTuningOptions, epoch: int, best: float | None, run_id: str
) -> float | None:
    """Evaluates all tasks after `epoch`; saves checkpoints when the mean main metric improves."""
    results = _evaluate(tasks, models, evals, options)
    mean = _mean_main_metric(tasks, results)
    improved = best is None or mean > best
    print(
        f"Epoch {epoch} eval: mean main metric {mean:.4f}"
        + (" (best)" if improved else "")
        + "; "
        + "; ".join(
            f"{name} " + ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
            for name, metrics in results.items()
        )
    )
    if improved:
        for name, task in tasks.items():
            metrics = {**results[name], MEAN_METRIC: mean, "epoch": epoch, RUN_ID: run_id}
            save_model_checkpoint(
                models[name],
                os.path.join(task.options.output_dir, BEST_DIR),
                metrics,
                task.export_options().get("labels"),
            )
        return mean
    return best


def _config_source(options: FineTuningOptions) -> str:
    if options.bert_config_file:
        return f"`bert_config_file`={options.bert_config_file}"
    return f"`init_checkpoint`={options.init_checkpoint}"
