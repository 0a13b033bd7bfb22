"""The package keeps its layers: `lint-imports` passes the contracts in pyproject.toml, and only
the command line imports `absl.flags`."""

import ast
import pathlib
import re
import shutil
import subprocess
import tomllib

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


def command_line_modules() -> list[re.Pattern]:
    """The command-line layer as pyproject.toml's contract lists it (`*`: one module name)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    contract = next(
        contract
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["name"] == "The library does not import the command line"
    )
    return [
        re.compile(re.escape(module).replace(r"\*", r"[^.]+"))
        for module in contract["forbidden_modules"]
    ]


def absl_flags_imports(tree: ast.AST) -> list[int]:
    """The lines of the statements in `tree` that import `absl.flags` or a name from it."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        if any(name == "absl.flags" or name.startswith("absl.flags.") for name in names):
            lines.append(node.lineno)
    return lines


def test_only_the_command_line_imports_absl_flags():
    """The library takes options and raises typed errors; reading flags is the command line's.
    (import-linter's forbidden contracts take only top-level external packages, not `absl.flags`.)
    """
    source = (
        "from absl import logging\nfrom absl import app, flags\nimport absl.flags.argparse_flags\n"
    )
    assert absl_flags_imports(ast.parse(source)) == [2, 3]
    command_line = command_line_modules()
    found = {}
    for path in sorted((REPO / "bert_tf").rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        if not any(pattern.fullmatch(module) for pattern in command_line):
            lines = absl_flags_imports(ast.parse(path.read_text()))
            if lines:
                found[module] = lines
    assert found == {}
