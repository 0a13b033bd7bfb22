"""Pretraining: learning, precision, XLA, checkpoints and clear errors on bad input."""

import dataclasses
import pathlib
import shutil
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    TINY,
    assert_fails_with_line,
    random_pretraining_batch,
    run_script,
    write_file,
    write_pretraining_batch,
    write_pretraining_records,
    write_tiny_config,
)
from bert_tf.bert_config import BertConfig
from bert_tf.checkpoints import write_tf1_checkpoint
from bert_tf.data.corpus import CorpusError
from bert_tf.data.pretraining_dataset import InputError, pretraining_dataset
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.pretraining import checkpoints, driver
from bert_tf.pretraining.driver import PretrainingOptions, build_model, run_pretraining
from bert_tf.pretraining.loops import PretrainingRunner
from bert_tf.training import distribution

SEQ, PREDICTIONS = 16, 4


def options(tmp_path, **overrides) -> PretrainingOptions:
    values = dict(
        bert_config_file=write_tiny_config(tmp_path),
        output_dir=str(tmp_path / "out"),
        input_file=write_pretraining_records(
            tmp_path / "train.tfrecord", 64, SEQ, PREDICTIONS, TINY["vocab_size"]
        ),
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        train_batch_size=8,
        eval_batch_size=8,
        learning_rate=1e-3,
        num_train_steps=6,
        num_warmup_steps=2,
        save_checkpoints_steps=3,
        iterations_per_loop=3,
        max_eval_steps=2,
        verbose=False,
    )
    values.update(overrides)
    return PretrainingOptions(**values)


def runner_on_fixed_batch(
    tmp_path, dtype="float32", jit_compile=False, learning_rate=1e-3, masked_lm_samples=0
):
    opts = options(
        tmp_path,
        learning_rate=learning_rate,
        num_warmup_steps=0,
        num_train_steps=1000,
        dtype=dtype,
        masked_lm_samples=masked_lm_samples,
    )
    strategy = tf.distribute.get_strategy()
    model, optimizer = build_model(BertConfig.from_json_file(opts.bert_config_file), opts, strategy)
    batch = random_pretraining_batch(8, SEQ, PREDICTIONS, TINY["vocab_size"], seed=3)
    iterator = iter(tf.data.Dataset.from_tensors(batch).repeat())
    return PretrainingRunner(strategy, model, optimizer, 8, jit_compile=jit_compile), iterator


@pytest.mark.parametrize("masked_lm_samples", [0, 16])
def test_overfits_a_fixed_batch(tmp_path, masked_lm_samples):
    runner, iterator = runner_on_fixed_batch(tmp_path, masked_lm_samples=masked_lm_samples)
    runner.train(iterator, 150)
    runner.reset_metrics()
    runner.train(iterator, 5)
    results = runner.metric_results()
    assert results["masked_lm_accuracy"] > 0.9, results
    assert results["next_sentence_accuracy"] == 1.0, results
    # A sampled softmax's training accuracy is against
    # its candidates; evaluation scores the whole vocab.
    assert runner.evaluate(tf.data.Dataset.from_tensors(next(iterator)))["masked_lm_accuracy"] > 0.9


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mixed_precision_trains_with_finite_loss(tmp_path, dtype):
    try:
        distribution.set_precision(dtype)
        runner, iterator = runner_on_fixed_batch(tmp_path, dtype=dtype)
        runner.train(iterator, 3)
        results = runner.metric_results()
        assert np.isfinite(results["loss"]), results
        assert runner.model.encoder.transformer_layers[0].compute_dtype == dtype
        assert (
            runner.model.compute_dtype
            == keras.mixed_precision.dtype_policy().compute_dtype
            == dtype
        )
        # float16 needs loss scaling against underflowing gradients; bfloat16 has float32's range.
        assert isinstance(runner.optimizer, keras.optimizers.LossScaleOptimizer) == (
            dtype == "float16"
        )
        assert int(runner.optimizer.iterations.numpy()) == 3
    finally:
        distribution.set_precision("float32")


def stored_step(checkpoint: str) -> int:
    """The optimizer's `iterations` in `checkpoint` (a loss-scaled optimizer's: its inner one's)."""
    return int(
        tf.train.load_variable(
            checkpoint, "optimizer/inner_optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"
        )
    )


def test_float16_steps_the_loss_scaler_skips_are_made_up(tmp_path):
    opts = options(tmp_path, dtype="float16")
    strategy = tf.distribute.get_strategy()
    try:
        distribution.set_precision("float16")
        model, optimizer = build_model(
            BertConfig.from_json_file(opts.bert_config_file), opts, strategy
        )
        optimizer.dynamic_scale.assign(2.0**30)  # the first steps' float16 gradients overflow
        manager = tf.train.CheckpointManager(
            checkpoints.pretraining_checkpoint(model, optimizer), opts.output_dir, max_to_keep=None
        )
        dataset = driver._distributed_dataset(
            strategy, [opts.input_file], 8, opts, is_training=True, vocab_size=None
        )
        runner = PretrainingRunner(strategy, model, optimizer, 8)
        driver._train(runner, iter(dataset), manager, opts)
    finally:
        distribution.set_precision("float32")
    assert float(optimizer.dynamic_scale.numpy()) < 2.0**30  # steps were skipped
    assert int(optimizer.iterations.numpy()) == opts.num_train_steps
    assert [(int(path.rsplit("-", 1)[1]), stored_step(path)) for path in manager.checkpoints] == [
        (3, 3),
        (6, 6),
    ]
    # An eval of the float16 run in float32 restores the weights and the step, not the loss scaler.
    evaluated = run_pretraining(
        dataclasses.replace(opts, dtype="float32", do_train=False, do_eval=True), strategy
    )
    assert evaluated["global_step"] == 6 and np.isfinite(evaluated["loss"])


def test_float16_run_whose_loss_is_never_finite_stops(tmp_path):
    batch = random_pretraining_batch(16, SEQ, PREDICTIONS, TINY["vocab_size"])
    batch["masked_lm_weights"][:, 0] = np.nan  # a NaN loss, whatever the loss scale
    path = write_pretraining_batch(tmp_path / "nan.tfrecord", batch)
    try:
        distribution.set_precision("float16")
        with pytest.raises(
            ValueError,
            match=r"^`dtype`=float16: the last 100 steps all had "
            r"non-finite gradients \(at step 0\); the loss is not "
            r"finite whatever the loss scale$",
        ):
            run_pretraining(
                options(
                    tmp_path,
                    input_file=str(path),
                    dtype="float16",
                    num_train_steps=1000,
                    iterations_per_loop=20,
                    log_every=100,
                    save_checkpoints_steps=100,
                ),
                tf.distribute.get_strategy(),
            )
    finally:
        distribution.set_precision("float32")


@pytest.mark.parametrize("masked_lm_samples", [0, 16])
def test_train_step_compiles_with_xla(tmp_path, masked_lm_samples):
    runner, iterator = runner_on_fixed_batch(
        tmp_path, jit_compile=True, masked_lm_samples=masked_lm_samples
    )
    before = [w.numpy() for w in runner.model.trainable_weights[:3]]
    runner.train(iterator, 2)
    assert np.isfinite(runner.metric_results()["loss"])
    assert any(
        not np.array_equal(a, w.numpy()) for a, w in zip(before, runner.model.trainable_weights)
    )
    # The loop ran the replica step, whose compiler IR
    # exists only for a jit_compile=True tf.function.
    step = runner._replica_train_step
    assert step.experimental_get_tracing_count() == 1
    assert "ENTRY" in step.experimental_get_compiler_ir(next(iterator))(stage="hlo")


def test_run_trains_checkpoints_and_evaluates(tmp_path):
    opts = options(tmp_path, do_eval=True)
    results = run_pretraining(opts, tf.distribute.get_strategy())
    assert results["global_step"] == 6
    out = pathlib.Path(opts.output_dir)
    assert tf.train.latest_checkpoint(str(out)).endswith("ckpt-6")
    lines = (out / "eval_results.txt").read_text().splitlines()
    assert sorted(line.split(" = ")[0] for line in lines) == [
        "global_step",
        "loss",
        "masked_lm_accuracy",
        "masked_lm_loss",
        "next_sentence_accuracy",
        "next_sentence_auc",
        "next_sentence_loss",
    ]
    events = list((out / "train").glob("events.out.tfevents.*"))
    logged = [
        (e.step, v.tag)
        for path in events
        for e in tf.compat.v1.train.summary_iterator(str(path))
        for v in e.summary.value
    ]
    assert {tag for _, tag in logged} >= {
        "loss",
        "masked_lm_accuracy",
        "masked_lm_loss",
        "next_sentence_accuracy",
        "next_sentence_loss",
        "next_sentence_auc",
        "learning_rate",
        "examples_per_second",
    }
    # Without --log_every, the metrics are logged after each loop of --iterations_per_loop=3 steps.
    assert sorted(step for step, tag in logged if tag == "loss") == [3, 6]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> PretrainingOptions:
    """The options of a finished 6-step run; tests resume copies of its output_dir (`resumed`)."""
    opts = options(tmp_path_factory.mktemp("trained"))
    run_pretraining(opts, tf.distribute.get_strategy())
    return opts


def resumed(trained, tmp_path, **overrides) -> PretrainingOptions:
    output_dir = shutil.copytree(trained.output_dir, tmp_path / "resumed")
    return dataclasses.replace(trained, output_dir=str(output_dir), num_train_steps=9, **overrides)


def test_init_checkpoint_loads_weights(trained, tmp_path):
    second = options(
        tmp_path,
        output_dir=str(tmp_path / "warm"),
        init_checkpoint=trained.output_dir,
        do_train=False,
        do_eval=True,
    )
    warm = run_pretraining(second, tf.distribute.get_strategy())
    # The initial weights, through a step that does not move them.
    cold = run_pretraining(
        options(
            tmp_path,
            output_dir=str(tmp_path / "cold"),
            learning_rate=0.0,
            num_train_steps=1,
            do_eval=True,
        ),
        tf.distribute.get_strategy(),
    )
    # a copy: the fixture stays as it is
    evaluated = resumed(trained, tmp_path, do_train=False, do_eval=True)
    trained_results = run_pretraining(evaluated, tf.distribute.get_strategy())
    assert warm["loss"] == pytest.approx(trained_results["loss"], rel=1e-6)
    assert warm["global_step"] == 0  # weights only: the optimizer starts afresh
    assert cold["loss"] != pytest.approx(trained_results["loss"], rel=1e-3)


def test_a_resumed_run_draws_a_new_data_order(tmp_path):
    opts = options(tmp_path)

    def first_batch(step):
        dataset = driver._distributed_dataset(
            tf.distribute.get_strategy(),
            [opts.input_file],
            8,
            opts,
            is_training=True,
            vocab_size=None,
            step=step,
        )
        return next(iter(dataset))["input_ids"].numpy()

    np.testing.assert_array_equal(first_batch(3), first_batch(3))  # still reproducible
    assert not np.array_equal(first_batch(0), first_batch(3))


def test_eval_only_run_needs_no_input_file(trained, tmp_path):
    output_dir = shutil.copytree(trained.output_dir, tmp_path / "resumed")
    result = run_script(
        "run_pretraining.py",
        "--do_eval",
        f"--eval_file={trained.input_file}",
        f"--output_dir={output_dir}",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--max_eval_steps=2",
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "global_step = 6\n" in (output_dir / "eval_results.txt").read_text()


def test_eval_file_is_read_only_with_do_eval(tmp_path):
    opts = options(tmp_path, eval_file=str(tmp_path / "nothing-*"), num_train_steps=1)
    assert run_pretraining(opts, tf.distribute.get_strategy())["loss"] > 0


def test_config_defaults_to_the_resumed_output_dirs_then_the_init_checkpoints(trained, tmp_path):
    assert (
        run_pretraining(
            resumed(trained, tmp_path, bert_config_file=None), tf.distribute.get_strategy()
        )["loss"]
        > 0
    )
    warm = dataclasses.replace(
        trained,
        bert_config_file=None,
        output_dir=str(tmp_path / "warm"),
        init_checkpoint=trained.output_dir,
        do_train=False,
        do_eval=True,
    )
    assert run_pretraining(warm, tf.distribute.get_strategy())["global_step"] == 0


def test_a_resumed_run_removes_what_an_interrupted_save_left(trained, tmp_path):
    # no new save
    opts = dataclasses.replace(resumed(trained, tmp_path), num_train_steps=trained.num_train_steps)
    out = pathlib.Path(opts.output_dir)
    # Killed while `CheckpointManager.save` wrote ckpt-9's shard (TF's names: functional_saver.py's
    # `<prefix>_temp/part-*`, tensor_bundle.cc's
    # `.tempstate<random>`) and the `checkpoint` file's temporary.
    shard = (
        out / "ckpt-9_temp" / "part-00000-of-00001.data-00000-of-00001.tempstate8327195610382718264"
    )
    write_file(shard, (out / "ckpt-6.data-00000-of-00001").read_bytes()[:100])
    state = write_file(out / f"checkpoint.tmp{'0a1b2c3d' * 4}", (out / "checkpoint").read_text())
    assert {str(shard.parent), str(state)} <= set(tf.io.gfile.glob(str(out / "*")))
    # resumed at step 6: already trained
    assert run_pretraining(opts, tf.distribute.get_strategy()) == {}
    assert not shard.parent.exists() and not state.exists()
    assert tf.train.latest_checkpoint(opts.output_dir).endswith("ckpt-6")


def test_no_config_to_be_found_names_the_flag(tmp_path):
    result = run_script(
        "run_pretraining.py",
        f"--input_file={tmp_path}/x",
        f"--output_dir={tmp_path}/out",
        "--do_train",
        timeout=120,
    )
    assert_fails_with_line(
        result,
        (
            "run_pretraining.py: error: --bert_config_file is required without --init_checkpoint "
            "or an --output_dir to resume"
        ),
    )
    assert not (tmp_path / "out").exists()


def test_resuming_with_another_architecture_is_refused(trained, tmp_path):
    config = write_tiny_config(tmp_path, num_attention_heads=2)  # the same shapes
    opts = resumed(trained, tmp_path, bert_config_file=config)
    saved = pathlib.Path(opts.output_dir, "bert_config.json")
    before = saved.read_text()
    with pytest.raises(
        ValueError,
        match=r"^`bert_config_file`=.*: .*ckpt-6: the model's config "
        r"does not match the checkpoint's: num_attention_heads 2 "
        r"in the model, 4 in ",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())
    assert saved.read_text() == before
    assert tf.train.latest_checkpoint(opts.output_dir).endswith("ckpt-6")


def test_resuming_with_other_shapes_and_no_saved_config_is_one_line(trained, tmp_path):
    opts = resumed(
        trained, tmp_path, bert_config_file=write_tiny_config(tmp_path, intermediate_size=48)
    )
    pathlib.Path(opts.output_dir, "bert_config.json").unlink()  # nothing to compare the config with
    with pytest.raises(
        ValueError,
        match=r"^`bert_config_file`=\S+: .*ckpt-6 was written by "
        r"another architecture \([^\n]*shape[^\n]*\); resume with "
        r"the config it was written with, or start a new "
        r"`output_dir`$",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())


def test_an_architecture_mismatch_names_where_the_config_came_from(trained, tmp_path):
    (tmp_path / "other").mkdir()
    other = dataclasses.replace(
        options(tmp_path / "other"),
        num_train_steps=1,
        bert_config_file=write_tiny_config(tmp_path, intermediate_size=48),
    )
    run_pretraining(other, tf.distribute.get_strategy())
    opts = resumed(trained, tmp_path, bert_config_file=None, init_checkpoint=other.output_dir)
    # the config comes from --init_checkpoint
    pathlib.Path(opts.output_dir, "bert_config.json").unlink()
    with pytest.raises(
        ValueError,
        match=r"^`init_checkpoint`=\S+/other/out's config \(no "
        r"`bert_config_file`\): .*ckpt-6 was written by another "
        r"architecture",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())


def test_resuming_with_float16_is_refused(trained, tmp_path):
    try:
        distribution.set_precision("float16")
        with pytest.raises(
            ValueError,
            match=r"^`dtype`: .*ckpt-6 was written without "
            r"`dtype`=float16; resume it without `dtype`=float16, "
            r"or start a new `output_dir`",
        ):
            run_pretraining(
                resumed(trained, tmp_path, dtype="float16"), tf.distribute.get_strategy()
            )
        # Evaluating it in float16 is no resume: the weights are float32 whatever the dtype.
        evaluated = run_pretraining(
            dataclasses.replace(
                trained,
                output_dir=str(tmp_path / "resumed"),
                dtype="float16",
                do_train=False,
                do_eval=True,
            ),
            tf.distribute.get_strategy(),
        )
        assert evaluated["global_step"] == 6 and np.isfinite(evaluated["loss"])
    finally:
        distribution.set_precision("float32")


def test_a_damaged_checkpoint_is_a_one_line_error(trained, tmp_path):
    opts = resumed(trained, tmp_path)
    data = pathlib.Path(opts.output_dir) / "ckpt-6.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:1000])  # a disk that filled up, say
    with pytest.raises(
        ValueError,
        match=r"^`output_dir`=.*resumed: cannot read .*resumed/ckpt-6 "
        r"\(.*\); start a new `output_dir`, with "
        r"`init_checkpoint`=.*resumed/ckpt-3 to start from the "
        r"one before it$",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())


@pytest.mark.parametrize("do_train", [True, False])
def test_output_dir_of_another_tool_is_refused(tmp_path, do_train):
    opts = options(tmp_path, do_train=do_train, do_eval=not do_train)
    pathlib.Path(opts.output_dir).mkdir()
    encoder = BertEncoder.from_bert_config(BertConfig.from_json_file(opts.bert_config_file))
    prefix = write_tf1_checkpoint(encoder, pathlib.Path(opts.output_dir) / "model.ckpt-100")
    # as google-research/bert writes it
    tf.compat.v1.train.update_checkpoint_state(opts.output_dir, prefix)
    with pytest.raises(
        ValueError,
        match=r"^`output_dir`=.*: .*model.ckpt-100 is not a bert_tf "
        r"pretraining checkpoint; to start from it, use "
        r"`init_checkpoint`=.*model.ckpt-100 with a new "
        r"`output_dir`$",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())
    # the directory is left as it was
    assert not pathlib.Path(opts.output_dir, "bert_config.json").exists()


def test_fewer_files_than_input_pipelines_share_the_records(tmp_path):
    path = write_pretraining_records(
        tmp_path / "one.tfrecord", 16, SEQ, PREDICTIONS, TINY["vocab_size"]
    )

    # the examples a pipeline reads (global batch 4), as tuples of input_ids
    def rows(input_context=None):
        dataset = pretraining_dataset(
            [path], 4, SEQ, PREDICTIONS, is_training=False, input_context=input_context
        )
        return [tuple(row) for batch in dataset.as_numpy_iterator() for row in batch["input_ids"]]

    shares = [
        rows(
            tf.distribute.InputContext(
                num_input_pipelines=2, input_pipeline_id=i, num_replicas_in_sync=2
            )
        )
        for i in range(2)
    ]
    assert [len(share) for share in shares] == [8, 8]
    assert sorted(shares[0] + shares[1]) == sorted(rows())


# -- bad input ------------------------------------------------------------------------------


def fails_leaving_no_output_dir(opts, error, match):
    """Runs `opts`, expects `error` matching `match`, and checks that the run left no output_dir."""
    with pytest.raises(error, match=match):
        run_pretraining(opts, tf.distribute.get_strategy())
    assert not pathlib.Path(opts.output_dir).exists()


def test_log_every_below_iterations_per_loop_is_refused(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, iterations_per_loop=4, log_every=2),
        ValueError,
        r"^`log_every`=2 is below `iterations_per_loop`=4: metrics are "
        r"read between loops; leave `log_every` out to log after each "
        r"loop, or lower `iterations_per_loop`$",
    )
    # --iterations_per_loop's default: 1000
    result = run_script(
        "run_pretraining.py",
        f"--input_file={tmp_path}/x",
        f"--output_dir={tmp_path}/out",
        "--bert_config_file=configs/tiny/bert_config.json",
        "--do_train",
        "--log_every=100",
        timeout=120,
    )
    assert_fails_with_line(
        result,
        "run_pretraining.py: error: --log_every=100 is below --iterations_per_loop=1000: "
        "metrics are read between loops; leave --log_every out to log after each loop, "
        "or lower --iterations_per_loop",
    )
    assert not (tmp_path / "out").exists()


def test_no_files_match(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(tmp_path / "nothing-*")),
        CorpusError,
        r"^`input_file`: no file matches .*nothing-\*$",
    )


def test_record_length_differs_from_flag(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, max_seq_length=32),
        InputError,
        r"train.tfrecord: feature 'input_ids' has length 16, "
        r"but `max_seq_length` makes it 32$",
    )


def test_a_later_record_of_another_length_names_the_flag(tmp_path):
    first = write_pretraining_records(
        tmp_path / "first.tfrecord", 8, SEQ, PREDICTIONS, TINY["vocab_size"]
    )
    later = write_pretraining_records(
        tmp_path / "later.tfrecord", 64, SEQ, PREDICTIONS - 2, TINY["vocab_size"]
    )
    # TFRecord files concatenate into one.
    mixed = write_file(
        tmp_path / "mixed.tfrecord",
        pathlib.Path(first).read_bytes() + pathlib.Path(later).read_bytes(),
    )
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(mixed)),
        InputError,
        rf"^`input_file`={mixed}: a record's feature 'masked_lm_\w+' has "
        rf"length {PREDICTIONS - 2}, but `max_predictions_per_seq` makes "
        rf"it {PREDICTIONS}$",
    )


def test_empty_shard(tmp_path):
    empty = tmp_path / "train-00001-of-00002"
    tf.io.TFRecordWriter(str(empty)).close()
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=f"{options(tmp_path).input_file},{empty}"),
        InputError,
        r"train-00001-of-00002: empty TFRecord file \(more "
        r"`num_output_shards` than examples\?\); leave it out of the "
        r"input$",
    )


def test_corrupt_tfrecord(tmp_path):
    opts = options(tmp_path)
    data = pathlib.Path(opts.input_file).read_bytes()
    corrupt = tmp_path / "corrupt.tfrecord"
    corrupt.write_bytes(data[: len(data) // 2] + bytes(200) + data[len(data) // 2 :])
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(corrupt)),
        InputError,
        r"^`input_file`=.*corrupt.tfrecord: corrupt TFRecord",
    )


def test_a_directory_or_a_text_file_among_the_inputs(tmp_path):
    (tmp_path / "records").mkdir()
    write_file(tmp_path / "records" / "a.txt", "text matched by a glob, not a TFRecord\n")
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(tmp_path / "records")),
        InputError,
        r"^/\S+/records: is a directory, not a TFRecord file$",
    )
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(tmp_path / "records" / "*")),
        InputError,
        r"^/\S+/a.txt: not a valid TFRecord file \(corrupted record at 0\)$",
    )


def test_corrupt_eval_file_is_named(trained, tmp_path):
    data = pathlib.Path(trained.input_file).read_bytes()
    corrupt = tmp_path / "corrupt.tfrecord"
    corrupt.write_bytes(data[: len(data) // 2] + bytes(200) + data[len(data) // 2 :])
    opts = resumed(
        trained, tmp_path, do_train=False, do_eval=True, eval_file=str(corrupt), max_eval_steps=8
    )
    with pytest.raises(
        InputError,
        match=r"^`eval_file`=.*corrupt.tfrecord: corrupt TFRecord "
        r"\(corrupted record at \d+\)$",
    ):
        run_pretraining(opts, tf.distribute.get_strategy())


def test_output_dir_under_a_file_names_the_flag(tmp_path):
    plain = write_file(tmp_path / "plain.txt", "not a folder\n")
    with pytest.raises(
        ValueError,
        match=rf"^`output_dir`: cannot create the directory {plain}/out "
        rf"\({plain} is not a directory\)$",
    ):
        run_pretraining(
            options(tmp_path, output_dir=str(plain / "out")), tf.distribute.get_strategy()
        )


def test_eval_without_training_needs_weights(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, do_train=False, do_eval=True),
        ValueError,
        r"^`do_eval` without `do_train` needs `init_checkpoint` or a "
        r"pretrained `output_dir`: .*out has no checkpoint$",
    )


def test_eval_set_smaller_than_a_batch(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, do_eval=True, eval_batch_size=100),
        ValueError,
        r"^`eval_batch_size`=100 is more than the 64 examples of "
        r"`input_file`: the eval would see no full batch$",
    )


def test_more_masked_lm_samples_than_the_vocab_is_refused(tmp_path):
    fails_leaving_no_output_dir(
        options(tmp_path, masked_lm_samples=97),
        ValueError,
        r"^`masked_lm_samples`=97 is not below the vocab_size 97 of "
        r"`bert_config_file`=.*: 0 scores the whole vocab exactly, and "
        r"faster$",
    )


def test_token_id_outside_vocab(tmp_path):
    path = write_pretraining_records(tmp_path / "big_ids.tfrecord", 64, SEQ, PREDICTIONS, 5000)
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=path),
        InputError,
        r"a token id in the input files is >= vocab_size \(97\)",
    )


# google-research/bert's --master is the TPU's address when --tpu_name is unset.
@pytest.mark.parametrize(
    "tpu_flags",
    [
        ["--tpu=grpc://127.0.0.1:9"],
        ["--use_tpu", "--master=grpc://127.0.0.1:9", "--num_tpu_cores=8"],
    ],
)
def test_unreachable_tpu_fails_within_bounded_time(tmp_path, tpu_flags):
    started = time.monotonic()
    result = run_script(
        "run_pretraining.py",
        *tpu_flags,
        "--tpu_timeout=1",
        f"--input_file={tmp_path}/x",
        "--bert_config_file=configs/tiny/bert_config.json",
        f"--output_dir={tmp_path}/out",
        "--do_train",
        timeout=120,
    )
    flag = next(f for f in tpu_flags if f.endswith("127.0.0.1:9"))
    assert_fails_with_line(result, f"run_pretraining.py: error: {flag}: no TPU answered within 1 s")
    assert not (tmp_path / "out").exists()
    assert time.monotonic() - started < 60


@pytest.mark.parametrize(
    "tpu_flag", ["--tpu_name=grpc://127.0.0.1:9", "--master=grpc://127.0.0.1:9"]
)
def test_explicit_use_tpu_false_ignores_the_tpu_flags(tmp_path, tpu_flag):
    result = run_script(
        "run_pretraining.py",
        "--use_tpu=false",
        tpu_flag,
        "--tpu_timeout=5",
        f"--input_file={tmp_path}/x",
        "--bert_config_file=configs/tiny/bert_config.json",
        f"--output_dir={tmp_path}/out",
        "--do_train",
        timeout=120,
    )
    assert_fails_with_line(
        result, f"run_pretraining.py: error: --input_file: no file matches {tmp_path}/x"
    )
    flag = tpu_flag.split("=")[0].replace("_name", "")
    assert f"--use_tpu=false: {flag}=grpc://127.0.0.1:9 is ignored" in result.stderr


def test_num_tpu_cores_must_be_the_tpus():
    distribution.check_num_tpu_cores(None, 32)
    distribution.check_num_tpu_cores(8, 8)
    with pytest.raises(
        distribution.DistributionError,
        match=r"^`num_tpu_cores`=8: the TPU has 32 "
        r"cores, and the TPU strategy uses "
        r"all of them",
    ):
        distribution.check_num_tpu_cores(8, 32)


def test_dynamic_masking_trains_from_raw_text(tmp_path, uncased_vocab_file, wikipedia_sample_lines):
    corpus = write_file(tmp_path / "corpus.txt", "\n".join(wikipedia_sample_lines[:400]) + "\n")
    (tmp_path / "real_vocab").mkdir()
    opts = options(
        tmp_path,
        bert_config_file=write_tiny_config(tmp_path / "real_vocab", vocab_size=30522),
        input_file=str(corpus),
        dynamic_masking=True,
        vocab_file=uncased_vocab_file,
        do_eval=True,
        num_train_steps=2,
        save_checkpoints_steps=2,
        iterations_per_loop=2,
    )
    results = run_pretraining(opts, tf.distribute.get_strategy())
    assert results["global_step"] == 2
    assert np.isfinite(results["loss"]) and results["loss"] > 0


def test_dynamic_masking_checks_every_corpus_before_training(tmp_path, uncased_vocab_file):
    good, latin1, blank = tmp_path / "good.txt", tmp_path / "latin1.txt", tmp_path / "blank.txt"
    good.write_text("some words here .\nand more words .\n", encoding="utf-8")
    latin1.write_bytes("caf\u00e9 au lait .\n".encode("latin-1"))
    blank.write_text("\n \n", encoding="utf-8")
    (tmp_path / "real_vocab").mkdir()
    text = dict(
        dynamic_masking=True,
        vocab_file=uncased_vocab_file,
        do_eval=True,
        bert_config_file=write_tiny_config(tmp_path / "real_vocab", vocab_size=30522),
    )
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(latin1), **text),
        CorpusError,
        r"^1 input lines are not valid UTF-8 \(first: .*latin1.txt line 1\)$",
    )
    fails_leaving_no_output_dir(
        options(tmp_path, input_file=str(good), eval_file=str(blank), **text),
        CorpusError,
        r"^`eval_file`: the corpus is empty \(1 files without "
        r"text\)$",
    )


def test_dynamic_masking_needs_a_vocab_the_model_fits(tmp_path, uncased_vocab_file):
    fails_leaving_no_output_dir(
        options(tmp_path, dynamic_masking=True),
        ValueError,
        "^`dynamic_masking` needs `vocab_file`$",
    )
    fails_leaving_no_output_dir(
        options(tmp_path, dynamic_masking=True, vocab_file=uncased_vocab_file),
        ValueError,
        "has 30522 tokens, more than the model's vocab_size 97",
    )
