"""A non-editable install of the wheel works from outside the checkout: the scripts answer `--help`
and the demo finds its config in the installed package."""

import shutil
import subprocess
import sys

import pytest

from bert_test_utils import REPO

SCRIPTS = [
    "run_pretraining.py",
    "run_classifier.py",
    "run_squad.py",
    "run_ner.py",
    "run_multiple_choice.py",
    "run_multitask.py",
    "extract_features.py",
    "create_pretraining_data.py",
    "create_vocab.py",
    "convert_checkpoint.py",
    "export_model.py",
    "data/fetch_public_data.py",
]


def run(*command, cwd, returncode: int = 0) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == returncode, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory) -> str:
    """A venv's Python with the wheel installed non-editable; TensorFlow and the other dependencies
    come from the Python running the tests."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy, so that the build leaves nothing in the checkout
    shutil.copytree(
        REPO / "bert_tf", source / "bert_tf", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ["pyproject.toml", "requirements.txt", "README.md"]:
        shutil.copy(REPO / name, source / name)
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        tmp / "dist",
        source,
        cwd=tmp,
    )
    run(
        sys.executable,
        "-m",
        "venv",
        "--system-site-packages",
        "--without-pip",
        tmp / "venv",
        cwd=tmp,
    )
    python = tmp / "venv" / "bin" / "python"
    (wheel,) = (tmp / "dist").glob("bert_tf-*.whl")
    run(
        python,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        "--force-reinstall",
        wheel,
        cwd=tmp,
    )
    location = run(python, "-c", "import bert_tf; print(bert_tf.__file__)", cwd=tmp)
    assert location.startswith(str(tmp / "venv")), location
    return str(python)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_help_runs_on_the_installed_package(installed_python, script, tmp_path):
    # -P: the script's own directory, the checkout, is not put on sys.path.
    # absl's --help exits with status 1.
    help_text = run(installed_python, "-P", REPO / script, "--help", cwd=tmp_path, returncode=1)
    assert help_text.rstrip().endswith("Try --helpfull to get a list of all flags."), help_text


def test_demo_reads_the_tiny_config_from_the_installed_package(installed_python, tmp_path):
    code = (
        "from bert_tf.bert_config import BertConfig\n"
        "from bert_tf.pretraining.demo import DEMO_SETTINGS\n"
        "path = DEMO_SETTINGS['bert_config_file']\n"
        "print(path)\n"
        "print(BertConfig.from_json_file(path).hidden_size)\n"
    )
    path, hidden_size = run(installed_python, "-c", code, cwd=tmp_path).split()
    assert path.startswith(installed_python.rsplit("/bin/", 1)[0]) and path.endswith(
        "tiny/bert_config.json"
    )
    assert hidden_size == "128"
