"""`import bert_tf` chooses Keras's TensorFlow backend when none is set, and refuses another one."""

import os
import subprocess
import sys

from bert_test_utils import REPO


def run_python(code: str, **env_changes) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "KERAS_BACKEND"}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_unset_backend_becomes_tensorflow():
    result = run_python("import os, bert_tf; print(os.environ['KERAS_BACKEND'])")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tensorflow"


def test_tensorflow_backend_is_kept():
    result = run_python(
        "import os, bert_tf; print(os.environ['KERAS_BACKEND'])", KERAS_BACKEND="tensorflow"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tensorflow"


def test_another_backend_is_refused_in_one_line():
    result = run_python("import bert_tf", KERAS_BACKEND="jax")
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line == (
        "bert_tf.errors.UserInputError: KERAS_BACKEND=jax: bert_tf needs Keras's TensorFlow "
        "backend; unset KERAS_BACKEND or set it to tensorflow"
    )


def test_keras_imported_first_on_another_backend_is_refused():
    """Keras imported before bert_tf has chosen its backend: the variable no longer tells it."""
    code = (
        "import os; os.environ['KERAS_BACKEND'] = 'torch'; import keras; "
        "del os.environ['KERAS_BACKEND']; import bert_tf"
    )
    result = run_python(code)
    assert result.returncode != 0
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("bert_tf.errors.UserInputError: KERAS_BACKEND=torch:")
    )
