"""Each flag is defined in one place, with one help text, whichever scripts take it."""

import ast
import collections
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

from bert_tf.compat_flags import IGNORED_FLAGS
from bert_tf.shared_flags import SHARED_FLAGS

REPO = pathlib.Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    path
    for pattern in ("*.py", "data/*.py")
    for path in REPO.glob(pattern)
    if 'if __name__ == "__main__":' in path.read_text()
)


def bert_tf_flags(script: pathlib.Path) -> dict[str, tuple[str, str]]:
    """`name -> (default, help)` of each flag that bert_tf defines for `script` (its --helpxml,
    after which absl exits 1)."""
    result = subprocess.run(
        [sys.executable, script.relative_to(REPO), "--helpxml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.startswith("<?xml"), result.stderr[-2000:]
    return {
        flag.findtext("name"): (flag.findtext("default"), flag.findtext("meaning"))
        for flag in ET.fromstring(result.stdout).iter("flag")
        if flag.findtext("file", "").startswith("bert_tf.")
    }


def test_a_flag_has_one_help_text_and_a_script_default_is_named_in_it():
    defined = collections.defaultdict(dict)  # name -> script -> (default, help)
    for script in SCRIPTS:
        for name, default_and_help in bert_tf_flags(script).items():
            defined[name][script.name] = default_and_help
    assert {"max_seq_length", "bert_config_file", "use_one_hot_embeddings"} <= set(defined)
    for name, by_script in defined.items():
        assert len({help_text for _, help_text in by_script.values()}) == 1, (name, by_script)
        defaults = collections.Counter(default for default, _ in by_script.values())
        if len(defaults) > 1:  # the scripts with a default of their own say so in the shared help
            usual, _ = defaults.most_common(1)[0]
            own = sorted(script for script, (default, _) in by_script.items() if default != usual)
            help_text = next(iter(by_script.values()))[1]
            assert name in SHARED_FLAGS and all(script in help_text for script in own), (name, own)


def test_each_flag_name_is_defined_once_in_the_source():
    """Every `DEFINE_*("name", ...)` in bert_tf, and the shared and ignored flags' tables."""
    definitions = collections.Counter(list(SHARED_FLAGS) + list(IGNORED_FLAGS))
    for path in (REPO / "bert_tf").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith("DEFINE_")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                definitions[node.args[0].value] += 1
    assert len(definitions) > 60
    assert [name for name, count in definitions.items() if count > 1] == []


# The command-line layer: the flag modules, the mains, `bert_tf.cli_errors` and `bert_tf.script`.
COMMAND_LINE_MODULES = re.compile(r"(^|/)(flags|\w+_flags|cli|\w+_cli|cli_errors|script)\.py$")
FLAG_TEXT = re.compile(r"--[a-z{]|--$")  # "--max_seq_length", f"--{flag}"


def command_line_function(function: ast.FunctionDef) -> bool:
    """A main, or a function that reads the absl flags it is given."""
    arguments = [argument.arg for argument in function.args.args + function.args.kwonlyargs]
    return function.name == "main" or function.name.endswith("_main") or "flag_values" in arguments


def flag_worded_raises(tree: ast.AST) -> list[int]:
    """The lines of the raise statements, outside command-line functions, whose text names a
    --flag."""
    found = []

    def visit(node, in_command_line):
        for child in ast.iter_child_nodes(node):
            inside = in_command_line or (
                isinstance(child, ast.FunctionDef) and command_line_function(child)
            )
            if isinstance(child, ast.Raise) and child.exc is not None and not inside:
                if any(
                    isinstance(text, ast.Constant)
                    and isinstance(text.value, str)
                    and FLAG_TEXT.search(text.value)
                    for text in ast.walk(child.exc)
                ):
                    found.append(child.lineno)
            visit(child, inside)

    visit(tree, False)
    return found


def test_library_errors_name_settings_and_only_the_command_line_words_them_as_flags():
    library = 'def check(n):\n    raise ValueError(f"--{n} is bad")\n'
    assert flag_worded_raises(ast.parse(library)) == [2]
    assert flag_worded_raises(ast.parse(library.replace("check(n)", "main(n)"))) == []
    worded = {}
    for path in (REPO / "bert_tf").rglob("*.py"):
        relative = path.relative_to(REPO).as_posix()
        if not COMMAND_LINE_MODULES.search(relative):
            worded[relative] = flag_worded_raises(ast.parse(path.read_text()))
    assert {module: lines for module, lines in worded.items() if lines} == {}
