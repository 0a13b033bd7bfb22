"""BUILD stays in sync with the tree, and Bazel parses it."""

import pathlib
import re
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


def build_rules(kind: str) -> dict[str, str]:
    """`name -> rule body` for every rule of `kind` in BUILD."""
    text = (REPO / "BUILD").read_text()
    rules = {}
    for match in re.finditer(rf"^{kind}\(\n(.*?)^\)", text, re.M | re.S):
        body = match.group(1)
        rules[re.search(r'name = "([^"]+)"', body).group(1)] = body
    return rules


def test_one_py_library_per_package():
    packages = sorted(
        p.parent.relative_to(REPO).as_posix() for p in (REPO / "bert_tf").rglob("__init__.py")
    )
    globbed = sorted(
        re.search(r'srcs = glob\(\["([^"]+)/\*\.py"\]\)', body).group(1)
        for body in build_rules("py_library").values()
        if 'glob(["bert_tf' in body
    )
    assert globbed == packages


def test_one_pytest_test_per_test_file():
    test_files = sorted(p.stem for p in (REPO / "tests").glob("test_*.py"))
    assert sorted(build_rules("pytest_test")) == test_files


def test_a_bazel_test_fails_when_its_tests_fail(tmp_path):
    """Bazel runs tests/pytest_main.py with the test file: its exit status must be pytest's."""
    statuses = {}
    for name, body in [
        ("passes", "def test_ok():\n    assert 1 + 1 == 2\n"),
        ("fails", "def test_wrong():\n    assert 1 + 1 == 3\n"),
        ("empty", "X = 1\n"),
    ]:
        path = tmp_path / f"test_{name}.py"
        path.write_text(body)
        statuses[name] = subprocess.run(
            [sys.executable, str(REPO / "tests" / "pytest_main.py"), str(path)],
            cwd=tmp_path,
            capture_output=True,
            timeout=120,
        ).returncode
    assert statuses == {"passes": 0, "fails": 1, "empty": 5}


def test_bazel_query_parses_build():
    bazel = shutil.which("bazel")
    assert bazel, "bazel is not installed: tests/run_all.sh installs Debian's bazel-bootstrap"
    result = subprocess.run(
        [bazel, "--batch", "query", "//..."], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    targets = set(result.stdout.split())
    expected = {
        f"//:{name}" for kind in ("py_library", "pytest_test") for name in build_rules(kind)
    }
    assert targets == expected
