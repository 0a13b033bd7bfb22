"""The optimizers take their papers' steps (for fine-tuning, PyTorch's AdamW's), on a Dense
layer and a LayerNorm."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training import optimization
from bert_tf.training.fused_adamw import FusedAdamW
from bert_tf.training.layerwise_adamw import LayerwiseAdamW

LEARNING_RATE, WEIGHT_DECAY, EPSILON = 1e-2, 0.1, 1e-6


def _layers_and_gradients(seed: int = 0):
    """A built Dense (kernel, bias) and LayerNorm (gamma, beta), random weights and gradients."""
    rng = np.random.default_rng(seed)
    dense, norm = keras.layers.Dense(3), keras.layers.LayerNormalization()
    dense.build((None, 4))
    norm.build((None, 3))
    variables = dense.weights + norm.weights
    for variable in variables:
        variable.assign(rng.normal(size=variable.shape).astype("float32"))
    gradients = [rng.normal(size=v.shape).astype("float32") for v in variables]
    return variables, gradients


def _adam_direction(moments, gradient, step, epsilon_hat: bool):
    """Adam's bias-corrected step direction m̂ / (sqrt(v̂) + ε), updating `moments` (m, v) in place;
    with `epsilon_hat` the paper's cheaper form, ε added before the correction (Keras's Adam)."""
    m, v = moments
    m[:] = 0.9 * m + 0.1 * gradient
    v[:] = 0.999 * v + 0.001 * gradient**2
    if epsilon_hat:
        return np.sqrt(1 - 0.999**step) / (1 - 0.9**step) * m / (np.sqrt(v) + EPSILON)
    return (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + EPSILON)


def _reference_steps(name, weights, gradients, steps):
    """The weights after `steps` updates by the paper's AdamW (decoupled
    decay) or LAMB (decay inside the trust ratio, Model Garden's layer
    adaptation only for decayed weights); kernels decay, the rest not."""
    weights = [w.copy() for w in weights]
    moments = [(np.zeros_like(w), np.zeros_like(w)) for w in weights]
    for step in range(1, steps + 1):
        for index, (w, g) in enumerate(zip(weights, gradients)):
            update = _adam_direction(moments[index], g, step, epsilon_hat=name == "adamw")
            if index == 0:  # the kernel: the only variable BERT decays
                if name == "lamb":
                    update = update + WEIGHT_DECAY * w
                    update = np.linalg.norm(w) / np.linalg.norm(update) * update
                else:
                    update = update + WEIGHT_DECAY * w  # AdamW: lr * wd * w, beside the Adam step
            w -= LEARNING_RATE * update
    return weights


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_steps_follow_the_paper_and_spare_layer_norm_and_biases(name):
    variables, gradients = _layers_and_gradients()
    expected = _reference_steps(name, [v.numpy() for v in variables], gradients, steps=3)
    # decays by 3e-9 in 3 steps
    optimizer = optimization.create_optimizer(
        name, LEARNING_RATE, num_train_steps=10**9, num_warmup_steps=0, weight_decay=WEIGHT_DECAY
    )
    for _ in range(3):
        optimizer.apply(gradients, variables)
    for variable, want in zip(variables, expected):
        np.testing.assert_allclose(
            variable.numpy(), want, rtol=2e-5, atol=2e-6, err_msg=variable.path
        )


@pytest.mark.parametrize("sparse", [False, True])
def test_fused_adamw_takes_keras_adamw_steps(sparse):
    # Dense gradients go through TensorFlow's fused kernel; sparse ones through Keras's ops.
    rng = np.random.default_rng(1)
    start = rng.normal(size=(6, 4)).astype("float32")
    optimizers = [
        keras.optimizers.AdamW(LEARNING_RATE, weight_decay=WEIGHT_DECAY, epsilon=EPSILON),
        FusedAdamW(LEARNING_RATE, weight_decay=WEIGHT_DECAY, epsilon=EPSILON),
    ]
    variables = [keras.Variable(start) for _ in optimizers]
    for _ in range(4):
        gradient = tf.constant(rng.normal(size=start.shape).astype("float32"))
        if sparse:
            gradient = tf.IndexedSlices(
                tf.gather(gradient, [0, 3]), tf.constant([0, 3]), tf.constant(start.shape)
            )
        for optimizer, variable in zip(optimizers, variables):
            optimizer.apply([gradient], [variable])
    keras_weights, fused_weights = (v.numpy() for v in variables)
    assert np.abs(fused_weights - start).max() > 1e-2
    np.testing.assert_allclose(fused_weights, keras_weights, rtol=1e-6, atol=1e-6)
    # The kernel takes 1 - beta_2 in float32 (1.3e-5 off the float64 0.001 that Keras casts).
    for name in ("_momentums", "_velocities"):
        np.testing.assert_allclose(
            getattr(optimizers[1], name)[0], getattr(optimizers[0], name)[0], rtol=3e-5
        )


def test_epsilon_after_bias_correction_treats_sparse_gradients_as_dense_ones():
    # An embedding's gradient (IndexedSlices) takes the same step as its dense form; the rows it
    # does not touch still decay their moments and move.
    rng = np.random.default_rng(2)
    start = rng.normal(size=(6, 4)).astype("float32")
    optimizers = [FusedAdamW(LEARNING_RATE, epsilon_after_bias_correction=True) for _ in "ab"]
    variables = [keras.Variable(start) for _ in optimizers]
    for _ in range(3):
        rows = tf.constant(1e-6 * rng.normal(size=(2, 4)).astype("float32"))
        sparse = tf.IndexedSlices(rows, tf.constant([0, 3]), tf.constant(start.shape))
        optimizers[0].apply([sparse], [variables[0]])
        optimizers[1].apply([tf.convert_to_tensor(sparse)], [variables[1]])
    np.testing.assert_allclose(variables[0].numpy(), variables[1].numpy(), rtol=1e-6)
    assert np.abs(variables[0].numpy() - start)[[0, 3]].min() > 1e-3


def test_finetuning_adamw_takes_torch_adamw_steps_under_transformers_schedule():
    # The default: PyTorch's AdamW (epsilon 1e-8, added after the bias correction) under
    # transformers' linear warmup, then a decay from the peak; gradients of a lower layer's scale
    # after clipping, where epsilon added before the bias correction (Keras's) shrinks the steps.
    import torch  # imported here: the other tests do without it

    total, warmup = 8, 2
    variables, gradients = _layers_and_gradients()
    gradients = [1e-6 * g for g in gradients]
    start = [v.numpy() for v in variables]
    optimizer = optimization.create_finetuning_optimizer(
        LEARNING_RATE, total, warmup, variable_depths={}, num_layers=1, weight_decay=WEIGHT_DECAY
    )
    weights = [torch.tensor(w, requires_grad=True) for w in start]
    decayed, spared = weights[:1], weights[1:]  # the kernel; its bias and the LayerNorm
    groups = [
        {"params": decayed, "weight_decay": WEIGHT_DECAY},
        {"params": spared, "weight_decay": 0.0},
    ]
    reference = torch.optim.AdamW(groups, lr=LEARNING_RATE, eps=1e-8)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        reference, lambda t: t / warmup if t < warmup else (total - t) / (total - warmup)
    )
    for _ in range(total - 1):
        optimizer.apply(gradients, variables)
        for weight, gradient in zip(weights, gradients):
            weight.grad = torch.tensor(gradient)
        reference.step()
        schedule.step()
    for variable, weight, before in zip(variables, weights, start):
        np.testing.assert_allclose(
            variable.numpy() - before,
            weight.detach().numpy() - before,
            rtol=1e-3,
            atol=1e-9,
            err_msg=variable.path,
        )


@pytest.mark.parametrize(
    "google_bert, epsilon, rates",
    [
        (False, 1e-8, [0.5, 1.0, 0.5]),  # transformers' decay: from the peak at the end of warmup
        (True, 1e-6, [0.5, 0.8, 0.4]),  # google-research/bert's: the line from the peak at step 0
    ],
)
def test_finetuning_optimizer_epsilon_and_schedule(google_bert, epsilon, rates):
    optimizer = optimization.create_finetuning_optimizer(
        LEARNING_RATE, 10, 2, variable_depths={}, num_layers=1, google_bert=google_bert
    )
    assert optimizer.epsilon == epsilon
    seen = []
    for step in (1, 2, 6):  # in warmup, at its end, halfway down
        optimizer.iterations.assign(step)
        seen.append(float(optimization.current_learning_rate(optimizer)) / LEARNING_RATE)
    np.testing.assert_allclose(seen, rates, rtol=1e-6)


def test_lamb_round_trips_through_its_config():
    optimizer = optimization.create_optimizer(
        "lamb", 1e-3, num_train_steps=100, num_warmup_steps=10, weight_decay=0.01
    )
    restored = type(optimizer).from_config(optimizer.get_config())
    assert restored.get_config() == optimizer.get_config()
    assert restored.lamb_weight_decay == 0.01 and restored.weight_decay is None


def _bert_optimizer(name):
    """BERT's pretraining AdamW or LAMB, or fine-tuning LayerwiseAdamW, decaying 3e-9 in 3 steps."""
    if name in optimization.OPTIMIZER_CLASSES:
        return optimization.create_optimizer(
            name,
            LEARNING_RATE,
            num_train_steps=10**9,
            num_warmup_steps=0,
            weight_decay=WEIGHT_DECAY,
        )
    return optimization.create_finetuning_optimizer(
        LEARNING_RATE,
        num_train_steps=10**9,
        num_warmup_steps=0,
        variable_depths={},
        num_layers=2,
        weight_decay=WEIGHT_DECAY,
    )


@pytest.mark.parametrize("name", ["adamw", "lamb", "layerwise_adamw"])
def test_an_optimizer_from_its_config_spares_the_same_variables(name):
    optimizer = _bert_optimizer(name)
    restored = type(optimizer).from_config(optimizer.get_config())
    steps = []
    for each in (optimizer, restored):
        variables, gradients = _layers_and_gradients()
        kernel_and_bias, gradients = variables[:2], gradients[:2]
        for _ in range(3):
            each.apply(gradients, kernel_and_bias)
        steps.append([v.numpy() for v in kernel_and_bias])
    for got, want, label in zip(steps[1], steps[0], ["kernel", "bias"]):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=0, err_msg=label)


def test_layerwise_adamw_names_its_argument():
    with pytest.raises(ValueError, match=r"^layerwise_lr_decay must be in \(0, 1\]; got 0.0$"):
        LayerwiseAdamW({}, num_layers=2, layerwise_lr_decay=0.0)
