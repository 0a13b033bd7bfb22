"""No module of bert_tf reads, writes or lists a path except through `tf.io.gfile`.

Builtin `open`, the file-system functions of `os` and `os.path`, `shutil`, `pathlib` and `glob`
work on local paths only, so a user's gs:// (or ram://) path would fail there, or be mangled
(`os.path.realpath('gs://b/x')` is `<cwd>/gs:/b/x`). The check reads each module's syntax tree and
resolves imports and aliases, so `from os.path import exists` or `import shutil as sh` count too.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]

# String operations that are right for `scheme://bucket/dir` paths too.
PATH_STRING_FUNCTIONS = {
    "os.path.join",
    "os.path.split",
    "os.path.basename",
    "os.path.dirname",
    "os.path.splitext",
    "os.path.sep",
    "glob.escape",
    "shutil.copyfileobj",
}
OS_FILE_FUNCTIONS = {
    "open",
    "fdopen",
    "remove",
    "unlink",
    "rename",
    "renames",
    "replace",
    "makedirs",
    "mkdir",
    "rmdir",
    "removedirs",
    "listdir",
    "scandir",
    "walk",
    "stat",
    "lstat",
    "chmod",
    "chown",
    "link",
    "symlink",
    "readlink",
    "truncate",
    "utime",
    "access",
    "chdir",
    "getcwd",
}
LOCAL_ONLY_MODULES = ("os.path", "shutil", "pathlib", "glob")

# The legitimate uses, by module and name, each with its reason ("*": every name in that module).
ALLOWED = {
    (
        "bert_tf/corpora/public_data.py",
        "*",
    ): "the local cache of public sample data ($BERT_TF_CACHE), never a user's path",
    (
        "bert_tf/io_utils.py",
        "os.path.realpath",
    ): "canonical_path: resolves local paths only (is_local), remote ones pass through",
    (
        "bert_tf/data/pretraining_data_generator.py",
        "open",
    ): "reads a worker's scratch file, in the local tempfile.gettempdir() directory",
    (
        "bert_tf/data/pretraining_data_generator.py",
        "os.remove",
    ): "removes a worker's scratch file, in the local tempfile.gettempdir() directory",
    ("bert_tf/output_lock.py", "*"): "the OS lock (fcntl.flock) of a local output "
    "directory; object stores get a gfile record instead",
    (
        "bert_tf/pretraining/demo.py",
        "pathlib.Path",
    ): "the no-flag demo: it runs only without --output_dir, "
    "into its local default and the checkout's configs",
}


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """`os.path.exists` for the expression `os.path.exists` (via the module's import aliases)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _is_local_only(name: str) -> bool:
    if name in PATH_STRING_FUNCTIONS:
        return False
    if name == "open" or name.startswith(tuple(f"{module}." for module in LOCAL_ONLY_MODULES)):
        return True
    return name.startswith("os.") and name.split(".")[1] in OS_FILE_FUNCTIONS


def local_file_uses(source: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every local-only file operation that `source` uses."""
    tree = ast.parse(source)
    aliases = {"open": "open"}  # local name -> what it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                # `import os.path` binds `os`; `import os.path as p` binds `p` to `os.path`.
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    uses, inner = [], set()
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        if isinstance(node, ast.Attribute):  # only the outermost of `os.path.exists`
            value = node.value
            while isinstance(value, ast.Attribute):
                inner.add(id(value))
                value = value.value
            inner.add(id(value))
        name = _dotted(node, aliases)
        if name and _is_local_only(name):
            uses.append((node.lineno, name))
    for node in ast.walk(tree):  # `from os.path import exists`, used or not
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            uses += [
                (node.lineno, f"{node.module}.{a.name}")
                for a in node.names
                if _is_local_only(f"{node.module}.{a.name}")
            ]
    return sorted(set(uses))


def _package_uses() -> dict[tuple[str, str], list[int]]:
    uses = {}
    for path in sorted((REPO / "bert_tf").rglob("*.py")):
        module = path.relative_to(REPO).as_posix()
        for line, name in local_file_uses(path.read_text(encoding="utf-8")):
            uses.setdefault((module, name), []).append(line)
    return uses


def _allowed(module: str, name: str) -> bool:
    return (module, name) in ALLOWED or (module, "*") in ALLOWED


def test_bert_tf_uses_gfile_for_every_path():
    offenders = [
        f"{module}:{lines[0]}: {name}"
        for (module, name), lines in _package_uses().items()
        if not _allowed(module, name)
    ]
    assert not offenders, "use tf.io.gfile (or add a reasoned entry to ALLOWED):\n" + "\n".join(
        offenders
    )


def test_every_allowed_use_still_exists():
    uses = _package_uses()
    stale = [
        key
        for key in ALLOWED
        if not any(module == key[0] and key[1] in ("*", name) for module, name in uses)
    ]
    assert not stale


@pytest.mark.parametrize(
    "source, found",
    [
        ("open(path)", ["open"]),
        ("import os\nos.path.exists(path)", ["os.path.exists"]),
        ("import os.path\nos.path.realpath(path)", ["os.path.realpath"]),
        ("from os import path\npath.isdir(p)", ["os.path.isdir"]),
        ("from os.path import getsize\n", ["os.path.getsize"]),
        (
            "import os\nos.remove(p); os.makedirs(p); os.listdir(p)",
            ["os.listdir", "os.makedirs", "os.remove"],
        ),
        ("import shutil as sh\nsh.rmtree(p)", ["shutil.rmtree"]),
        ("from pathlib import Path\nPath(p).read_text()", ["pathlib.Path"]),
        ("import pathlib\nx: pathlib.Path", ["pathlib.Path"]),
        ("import glob\nglob.glob(p)", ["glob.glob"]),
        # String operations, streams and local scratch are fine.
        (
            "import os, glob, shutil, tempfile\nos.path.join(a, "
            "os.path.basename(b)); os.fspath(p); os.environ\n"
            "glob.escape(p); shutil.copyfileobj(a, b); tempfile.mkdtemp()",
            [],
        ),
    ],
)
def test_the_check_finds_each_kind_of_local_file_use(source, found):
    assert sorted({name for _, name in local_file_uses(source)}) == found
