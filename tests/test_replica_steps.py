"""The train step on two replicas (MirroredStrategy over two logical CPUs): one all-reduce of the
gradients a step, and dropout drawing its own mask in each replica.

The logical devices must be set up before TensorFlow starts, so the checks run in one fresh
process: this file is also its script.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SEQ, PREDICTIONS, BATCH = 16, 4, 8
# The tracking run: steps per window (a Keras epoch) and windows.
WINDOW, WINDOWS = 50, 6


@pytest.fixture(scope="module")
def results() -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]),
        TF_CPP_MIN_LOG_LEVEL="2",
    )
    run = subprocess.run(
        [sys.executable, __file__], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("optimizer", ["adamw", "loss_scaled_adamw"])
def test_the_train_step_all_reduces_the_gradients_once(results, optimizer):
    """Each replica's collective all-reduces carry the gradients once
    (every trainable parameter), plus the masked-LM weight sum (one
    number); Keras's optimizer would all-reduce the sum a second time."""
    counted = results["all_reduced"][optimizer]
    assert counted["replicas"] == [0, 1]
    assert counted["elements_per_replica"] == [counted["parameters"] + 1] * 2


def test_replicas_draw_different_dropout_masks_in_a_step(results):
    masks = results["dropout_masks"]
    for replica in masks:
        assert 0.4 < np.mean(replica) < 0.6  # about half dropped, in each replica
    assert np.mean(np.not_equal(masks[0], masks[1])) > 0.4  # independent masks: about half differ


def test_two_replicas_with_dropout_track_one_device_on_the_global_batch(results):
    """The same examples, the same start, dropout 0.3: each window's mean
    training loss agrees to within the dropout's noise (another seed moves it as
    much), and so does their mean, more tightly; without dropout the loss falls
    well below both. Meanwhile the loss falls to a fraction of its start."""
    one, two = (
        np.array(results["tracking"]["one_device"]),
        np.array(results["tracking"]["mirrored"]),
    )
    assert one[-1] < 0.5 * one[0] and two[-1] < 0.5 * two[0]
    np.testing.assert_allclose(two, one, rtol=0.15)
    np.testing.assert_allclose(two[1:].mean(), one[1:].mean(), rtol=0.1)


# -- the worker process ---------------------------------------------------------------------------


def _all_reduced(strategy, loss_scale: bool) -> dict:
    """What the collective reduce ops of one traced pretraining step carry, per replica device."""
    import tensorflow as tf

    from bert_test_utils import random_pretraining_batch, tiny_config
    from bert_tf.models import BertEncoder, BertPretrainer
    from bert_tf.pretraining.loops import PretrainingRunner
    from bert_tf.training.optimization import create_optimizer

    config = tiny_config(num_hidden_layers=1)
    with strategy.scope():
        model = BertPretrainer(BertEncoder.from_bert_config(config))
        model.build_with_dummy_inputs()
        optimizer = create_optimizer("adamw", 1e-3, 100, 0, loss_scale=loss_scale)
        optimizer.build(model.trainable_variables)
    runner = PretrainingRunner(strategy, model, optimizer, BATCH)
    batch = random_pretraining_batch(BATCH, SEQ, PREDICTIONS, config.vocab_size)
    features = next(
        iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensors(batch).repeat()))
    )
    step = tf.function(lambda features: strategy.run(runner._replica_train_step, args=(features,)))
    elements = {}
    for op in _collective_reduces(step.get_concrete_function(features).graph):
        replica = tf.DeviceSpec.from_string(op.device).device_index
        elements[replica] = elements.get(replica, 0) + int(np.prod(op.inputs[0].shape))
    return {
        "replicas": sorted(elements),
        "elements_per_replica": [elements[r] for r in sorted(elements)],
        "parameters": sum(int(np.prod(v.shape)) for v in model.trainable_variables),
    }


def _collective_reduces(graph) -> list:
    """The CollectiveReduce ops of `graph` and of the functions it calls, however deep."""
    found = [op for op in graph.get_operations() if op.type.startswith("CollectiveReduce")]
    for function in graph._functions.values():
        found += _collective_reduces(function.graph)
    return found


def _dropout_masks(strategy) -> list:
    """The elements each replica's Dropout(0.5) keeps in one step, on the same input."""
    import tensorflow as tf

    from bert_tf.layers import Dropout

    with strategy.scope():
        layer = Dropout(0.5, seed=1)

    def kept():
        return layer(tf.ones((32, 32)), training=True) != 0

    masks = tf.function(lambda: strategy.run(kept))()
    return [
        mask.numpy().astype(int).tolist() for mask in strategy.experimental_local_results(masks)
    ]


def _tracking_losses(strategies: dict) -> dict:
    """The mean training loss of each window, for each strategy: a small classifier with dropout,
    the same start and the same global batches."""
    import keras
    import tensorflow as tf

    from bert_tf.layers import Dropout
    from bert_tf.models.train_step import GlobalClippingTrainStep

    class Classifier(GlobalClippingTrainStep, keras.Model):
        pass

    rng = np.random.default_rng(0)
    x = rng.normal(size=(WINDOW * WINDOWS * 32, 16)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(16, 4)), axis=1)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
    losses, initial = {}, None
    for name, strategy in strategies.items():
        with strategy.scope():
            inputs = keras.Input((16,))
            hidden = Dropout(0.3, seed=3)(keras.layers.Dense(64, activation="relu")(inputs))
            model = Classifier(inputs, keras.layers.Dense(4)(hidden))
            if initial is None:
                initial = model.get_weights()
            model.set_weights(initial)
            model.compile(
                optimizer=keras.optimizers.Adam(3e-3),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )
        history = model.fit(dataset.repeat(), steps_per_epoch=WINDOW, epochs=WINDOWS, verbose=0)
        losses[name] = history.history["loss"]
    return losses


def main():
    import tensorflow as tf

    (cpu,) = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    print(
        json.dumps(
            {
                "all_reduced": {
                    "adamw": _all_reduced(mirrored, loss_scale=False),
                    "loss_scaled_adamw": _all_reduced(mirrored, loss_scale=True),
                },
                "dropout_masks": _dropout_masks(mirrored),
                "tracking": _tracking_losses(
                    {"one_device": tf.distribute.OneDeviceStrategy("/cpu:0"), "mirrored": mirrored}
                ),
            }
        )
    )


if __name__ == "__main__":
    from bert_tf.script import import_out_of_the_collectors_way

    import_out_of_the_collectors_way("tensorflow")
    main()
