"""Each script's `--help` lists its own flags (absl lists only the main module's key flags),
`--help` and a bad flag answer without importing TensorFlow, and TensorFlow's C++ INFO lines stay
off unless asked for (`bert_tf.script`)."""

import os
import re
import subprocess
import sys

import pytest

from bert_test_utils import REPO

# Each script with some of the flags its --help must list.
SCRIPTS = {
    "run_pretraining.py": ["--input_file", "--train_batch_size", "--tpu", "--dynamic_masking"],
    "run_classifier.py": ["--task_name", "--text_a_column", "--learning_rate", "--dtype"],
    "run_squad.py": [
        "--init_checkpoint",
        "--doc_stride",
        "--version_2_with_negative",
        "--export_dir",
    ],
    "run_ner.py": ["--data_dir", "--label_smoothing", "--export_dir"],
    "run_multiple_choice.py": ["--data_dir", "--train_batch_size"],
    "run_multitask.py": [
        "--tasks",
        "--task_sampling",
        "--sampling_temperature",
        "--init_checkpoint",
    ],
    "create_pretraining_data.py": ["--input_file", "--dupe_factor", "--num_output_shards"],
    "create_vocab.py": ["--input_file", "--vocab_size", "--num_unused"],
    "convert_checkpoint.py": ["--input_checkpoint", "--output_dir", "--to", "--bert_config_file"],
    "export_model.py": ["--model_type", "--export_dir", "--labels"],
    "extract_features.py": ["--layers", "--pooling"],
    "data/fetch_public_data.py": [],
}


def run_importing(script: str, *flags: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`script` run on `flags`, and the modules it imported (`python -X importtime`)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", script, *flags],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    return result, imported


@pytest.mark.parametrize("script, expected", SCRIPTS.items())
def test_help_lists_the_scripts_flags_and_bad_flags_fail_without_tensorflow(script, expected):
    result, imported = run_importing(script, "--help")
    listed = [
        flag
        for flag in expected
        if f"  {flag}:" in result.stdout or f"  --[no]{flag[2:]}:" in result.stdout
    ]
    assert listed == expected, result.stdout
    assert "\n  --xla_" not in result.stdout  # not every library's flags, as --helpfull
    assert "tensorflow" not in imported and "bert_tf" in imported

    result, imported = run_importing(script, "--no_such_flag")
    assert result.returncode == 1
    assert "Unknown command line flag 'no_such_flag'" in result.stderr
    assert "tensorflow" not in imported


def test_every_script_runs_its_main_through_bert_tf_script():
    scripts = sorted(
        path.relative_to(REPO).as_posix()
        for pattern in ("*.py", "data/*.py")
        for path in REPO.glob(pattern)
        if 'if __name__ == "__main__":' in path.read_text()
    )
    assert scripts == sorted(SCRIPTS)
    for script in scripts:
        assert "    script.run(" in (REPO / script).read_text(), script


def test_the_tensorflow_free_flag_values_are_the_ones_the_code_accepts():
    from bert_tf.checkpoints.task_heads import TASK_MODELS
    from bert_tf.export.flags import MODEL_TYPES
    from bert_tf.pretraining.flags import OPTIMIZERS
    from bert_tf.training.optimization import OPTIMIZER_CLASSES

    assert OPTIMIZERS == tuple(OPTIMIZER_CLASSES)
    assert MODEL_TYPES == (*TASK_MODELS, "hub")


# A line of TensorFlow's C++ logging at INFO level: "2026-12-01 23:49:51.552040: I tensorflow/...".
CPP_INFO_LINE = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+: I ", re.M)


@pytest.mark.parametrize("level, info_shown", [(None, False), ("0", True)])
def test_tensorflows_cpp_info_lines_are_off_unless_the_variable_asks(tmp_path, level, info_shown):
    env = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    result = subprocess.run(
        [
            sys.executable,
            "run_pretraining.py",
            "--do_train",
            "--input_file=/nonexistent/*.tfrecord",
            "--bert_config_file=configs/tiny/bert_config.json",
            f"--output_dir={tmp_path / 'out'}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 1
    # the error still shows
    assert "/nonexistent/*.tfrecord" in result.stderr.strip().splitlines()[-1]
    assert bool(CPP_INFO_LINE.search(result.stderr)) == info_shown, result.stderr
