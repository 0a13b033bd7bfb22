"""The package keeps its layers: `lint-imports` passes the contracts in pyproject.toml."""

import pathlib
import re
import shutil
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_lint_imports_keeps_every_contract():
    lint_imports = shutil.which("lint-imports")
    assert lint_imports, "lint-imports is not installed: pip install -r requirements-test.txt"
    result = subprocess.run(
        [lint_imports, "--no-cache", "--no-logo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken\.", result.stdout), result.stdout
