"""The README, the docs pages and the benchmarks page stay short, their relative links resolve,
and every `python <script>.py --flag` they show uses flags the script defines."""

import ast
import functools
import json
import re
import shlex
import subprocess
import sys

import pytest

from bert_test_utils import REPO

README = REPO / "README.md"
BENCHMARKS = REPO / "benchmarks" / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, BENCHMARKS, *DOCS]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)

# absl's own flags, defined by `app.run` for every script.
ABSL_FLAGS = {
    "help": True,
    "helpfull": True,
    "helpshort": True,
    "helpxml": True,
    "flagfile": False,
    "undefok": False,
}

# Runs a script with `bert_tf.script.run` replaced: the flags it defined, as `name -> is boolean`.
FLAGS_OF_SCRIPT = """
import json, runpy, sys
from absl import flags
from bert_tf import script

def print_flags(main):
    print(json.dumps({name: flags.FLAGS[name].boolean for name in flags.FLAGS}))

script.run = print_flags
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_pages_are_short():
    assert DOCS, "docs/ has no pages"
    limits = {README: 10_000, BENCHMARKS: 10_000, **{page: 15_000 for page in DOCS}}
    too_long = {
        page.relative_to(REPO).as_posix(): len(page.read_text(encoding="utf-8"))
        for page, limit in limits.items()
        if len(page.read_text(encoding="utf-8")) > limit
    }
    assert not too_long, f"characters over the limit: {too_long}"


def anchors(page) -> set[str]:
    """GitHub's anchors for the headings of `page`."""
    seen, result = {}, set()
    for heading in re.findall(
        r"^#+\s+(.*?)\s*$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M
    ):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        result.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return result


def test_relative_links_resolve():
    broken = []
    for page in PAGES:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def shell_commands(page) -> list[list[str]]:
    """The commands of `page`'s fenced code blocks, each as its words."""
    commands = []
    for block in FENCE.findall(page.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            command = []
            for word in shlex.split(line, comments=True):
                if word in ("&&", "||", ";", "|"):
                    commands.append(command)
                    command = []
                else:
                    command.append(word)
            commands.append(command)
    return [command for command in commands if command]


def python_script_commands(page) -> list[tuple[str, list[str]]]:
    """`(script, flags)` for each `python <script>.py --flag...` command of `page`."""
    found = []
    for words in shell_commands(page):
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):  # VAR=value before the command
            words = words[1:]
        if not words or words[0] not in ("python", "python3"):
            continue
        args = [word for word in words[1:] if word != "-P"]
        if args and args[0].endswith(".py"):
            found.append((args[0], [arg for arg in args[1:] if arg.startswith("--")]))
    return found


@functools.cache
def script_flags(script: str) -> dict[str, bool]:
    """`name -> is boolean` for every flag `script` accepts."""
    source = (REPO / script).read_text()
    # the flags are defined in bert_tf modules that import no TensorFlow
    if "script.run(" in source:
        result = subprocess.run(
            [sys.executable, "-c", FLAGS_OF_SCRIPT, script],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        defined = json.loads(result.stdout.splitlines()[-1])
    else:  # a benchmark imports TensorFlow first: read its flag definitions from the source
        defined = {}
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                if node.func.attr.startswith("DEFINE_"):
                    defined[node.args[0].value] = node.func.attr == "DEFINE_bool"
                elif node.func.attr == "add_argument" and node.args[0].value.startswith("--"):
                    defined[node.args[0].value[2:]] = False
    return {**ABSL_FLAGS, **defined}


def unknown_flags(script: str, flags: list[str]) -> list[str]:
    defined = script_flags(script)
    unknown = []
    for flag in flags:
        name = flag[2:].split("=", 1)[0]
        if name not in defined and not (name.startswith("no") and defined.get(name[2:])):
            unknown.append(flag)
    return unknown


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_commands_use_flags_the_scripts_define(page):
    problems = []
    for script, flags in python_script_commands(page):
        if not (REPO / script).is_file():
            problems.append(f"{script}: no such script")
        elif unknown := unknown_flags(script, flags):
            problems.append(f"{script}: unknown flags {unknown}")
    assert not problems, "\n".join(problems)


def test_the_commands_are_found_and_a_wrong_flag_is_caught():
    scripts = {script for page in PAGES for script, _ in python_script_commands(page)}
    assert {
        "run_pretraining.py",
        "run_classifier.py",
        "run_squad.py",
        "export_model.py",
        "create_pretraining_data.py",
        "benchmarks/bench_train_step.py",
    } <= scripts
    assert (
        unknown_flags("run_pretraining.py", ["--num_train_steps=3", "--nodo_train", "--helpfull"])
        == []
    )
    assert unknown_flags("run_pretraining.py", ["--num_train_step=3", "--nooutput_dir"]) == [
        "--num_train_step=3",
        "--nooutput_dir",
    ]
    assert unknown_flags(
        "benchmarks/bench_train_step.py", ["--noxla", "--steps=5", "--step=5"]
    ) == ["--step=5"]
