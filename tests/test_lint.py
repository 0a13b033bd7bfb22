"""The tree passes ruff's lint and format checks, with the settings in pyproject.toml."""

import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"]
)
def test_ruff(command):
    ruff = shutil.which("ruff")
    assert ruff, "ruff is not installed: pip install -r requirements-test.txt"
    result = subprocess.run(
        [ruff, *command, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"
