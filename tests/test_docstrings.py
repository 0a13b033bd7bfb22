"""Docstrings stay short, and the public API documents its arguments and results.

The public API is every name a package's `__init__` exports, through `lazy_exports` (its
`_EXPORTS`) or a literal `__all__` list: the exported functions, and the constructors and
public methods of the exported classes. Only `ast` is used: no TensorFlow is imported.
"""

import ast
import builtins
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = REPO / "bert_tf"
MAX_LINES = 15
# Keras documents these overrides of `keras.Layer` / `keras.Model`.
KERAS_OVERRIDES = {
    "build",
    "call",
    "compute_loss",
    "compute_metrics",
    "compute_output_shape",
    "from_config",
    "get_config",
}
SECTION = re.compile(r"^\s*(Args|Attributes|Returns|Yields|Raises|Example|Examples|Note):\s*$")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def long_docstrings(tree: ast.Module) -> list[str]:
    """`name (lines)` for each function or method whose docstring is over `MAX_LINES` lines."""
    return [
        f"{node.name} ({len(doc.splitlines())})"
        for node in ast.walk(tree)
        if isinstance(node, FUNCTIONS)
        and (doc := ast.get_docstring(node, clean=True))
        and len(doc.splitlines()) > MAX_LINES
    ]


def section(doc: str | None, *titles: str) -> list[str] | None:
    """The indented lines under the first section header in `doc` named one of `titles`, or None
    without one."""
    lines = (doc or "").splitlines()
    for start, line in enumerate(lines):
        if SECTION.match(line) and line.strip()[:-1] in titles:
            indent = len(line) - len(line.lstrip())
            body = []
            for line in lines[start + 1 :]:
                if line.strip() and len(line) - len(line.lstrip()) <= indent:
                    break  # the next section, or text after this one
                body.append(line)
            return body
    return None


def documented_names(doc: str | None, *titles: str) -> set[str] | None:
    """The names a section's entries describe (`name:`, `a, b:`, `*args, **kwargs:`)."""
    body = section(doc, *titles)
    if body is None:
        return None
    entries = [line for line in body if line.strip()]
    if not entries:
        return set()
    indent = min(len(line) - len(line.lstrip()) for line in entries)
    names = set()
    for line in entries:
        match = re.match(r"([\w*, ]+?)\s*(\([^)]*\))?:(\s|$)", line[indent:])
        if len(line) - len(line.lstrip()) == indent and match:
            names.update(name.strip().lstrip("*") for name in match.group(1).split(","))
    return names


def parameters(function: ast.FunctionDef) -> list[str]:
    args = function.args
    named = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    starred = [a.arg for a in (args.vararg, args.kwarg) if a]
    return [name for name in named + starred if name not in ("self", "cls")]


def own_nodes(function: ast.FunctionDef):
    """The nodes of `function`'s body, without those of the functions and classes it defines."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def result_section(function: ast.FunctionDef) -> str | None:
    """`Yields` for a generator, `Returns` for a function that returns a value, else None.

    A function returns a value when its return annotation is not `None`, or, without one, when
    its body has a `return` with a value other than `None`.
    """
    nodes = list(own_nodes(function))
    if any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return "Yields"
    if function.returns is not None:
        return None if ast.unparse(function.returns) in ("None", "NoReturn") else "Returns"
    returns_value = any(
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        for node in nodes
    )
    return "Returns" if returns_value else None


def name_problems(title: str, wanted: list[str], documented: set[str], noun: str) -> list[str]:
    """The names in `wanted` that a section does not describe, and those it describes in vain."""
    missing = [name for name in wanted if name not in documented]
    unknown = sorted(documented - set(wanted))
    problems = []
    if missing:
        problems.append(f"{title}: misses {', '.join(missing)}")
    if unknown:
        problems.append(f"{title}: no {noun} {', '.join(unknown)}")
    return problems


def function_problems(function: ast.FunctionDef, constructor_doc: str | None = None) -> list[str]:
    """What `function`'s docstring lacks or gets wrong; a constructor's arguments may be in
    `constructor_doc` (its class's docstring)."""
    doc = ast.get_docstring(function, clean=True)
    documented = (documented_names(doc, "Args") or set()) | (
        documented_names(constructor_doc, "Args") or set()
    )
    problems = name_problems("Args", parameters(function), documented, "parameter")
    result = result_section(function)
    if result and section(doc, result) is None:
        problems.append(f"no {result}: section")
    return problems


def decorator_names(node) -> set[str]:
    return {ast.unparse(d).split("(")[0].split(".")[-1] for d in node.decorator_list}


def class_problems(cls: ast.ClassDef, keras: bool = False) -> dict[str, list[str]]:
    """`method -> problems` for the constructor and public methods of `cls`, a Keras class
    (whose `KERAS_OVERRIDES` are exempt) when `keras`."""
    class_doc = ast.get_docstring(cls, clean=True)
    problems = {}
    if "dataclass" in decorator_names(cls):
        fields = [
            node.target.id
            for node in cls.body
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and "ClassVar" not in ast.unparse(node.annotation)
        ]
        documented = documented_names(class_doc, "Args", "Attributes") or set()
        problems["__init__"] = name_problems("Attributes", fields, documented, "field")
    for node in cls.body:
        if not isinstance(node, FUNCTIONS):
            continue
        public = not node.name.startswith("_") or node.name == "__init__"
        exempt = (keras and node.name in KERAS_OVERRIDES) or decorator_names(node) & {
            "property",
            "cached_property",
            "setter",
        }
        if public and not exempt:
            found = function_problems(node, class_doc if node.name == "__init__" else None)
            if found:
                problems[node.name] = found
    return {method: found for method, found in problems.items() if found}


def module_path(module: str) -> pathlib.Path:
    path = REPO.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def definition(path: pathlib.Path, name: str) -> tuple[pathlib.Path, ast.AST | None]:
    """Where `name` is defined, following `from ... import name` out of `path`: the function or
    class, or None for another value (a constant)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name:
            return path, node
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names):
            return definition(module_path(node.module), name)
        if isinstance(node, ast.Assign | ast.AnnAssign) and name in {
            ast.unparse(target)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        }:
            return path, None
    raise LookupError(f"{path} defines no {name}")


def is_keras_class(path: pathlib.Path, cls: ast.ClassDef) -> bool:
    """Whether `cls` (defined in `path`) derives from a `keras.` class, directly or through
    base classes that bert_tf defines (a builtin base, such as `ValueError`, is not Keras)."""
    for base in cls.bases:
        if ast.unparse(base).startswith("keras."):
            return True
        if isinstance(base, ast.Name) and not hasattr(builtins, base.id):
            base_path, base_node = definition(path, base.id)
            if isinstance(base_node, ast.ClassDef) and is_keras_class(base_path, base_node):
                return True
    return False


def exports(init: pathlib.Path) -> dict[str, pathlib.Path]:
    """`name -> where to look it up` for what a package's `__init__.py` exports: its `_EXPORTS`
    dict, else its literal `__all__` list (names the `__init__` imports), else {}."""
    assigned = {
        target.id: node.value
        for node in ast.parse(init.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    if "_EXPORTS" in assigned:
        return {
            name: module_path(module)
            for name, module in ast.literal_eval(assigned["_EXPORTS"]).items()
        }
    if isinstance(assigned.get("__all__"), (ast.List, ast.Tuple)):
        return {name: init for name in ast.literal_eval(assigned["__all__"])}
    return {}


def public_api() -> list[tuple[str, pathlib.Path, ast.AST]]:
    """`(name, path, definition)` for each exported function and class."""
    api = [
        (name, *definition(where, name))
        for init in sorted(PACKAGE.rglob("__init__.py"))
        for name, where in exports(init).items()
    ]
    return [(name, path, node) for name, path, node in api if node is not None]


def test_no_function_docstring_is_over_15_lines():
    too_long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = long_docstrings(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            too_long[path.relative_to(REPO).as_posix()] = found
    assert not too_long, f"docstrings over {MAX_LINES} lines: {too_long}"


def test_public_api_documents_args_and_returns():
    api = public_api()
    assert {
        "BertEncoder",
        "BertClassifier",
        "BertTokenizer",
        "TransformerBlock",
        "fetch_uncased_vocab",
        "load_checkpoint",
        "run_finetuning",
        "export_task_model",
    } <= {name for name, _, _ in api}
    problems = {}
    for name, path, node in api:
        where = f"{path.relative_to(REPO).as_posix()}: {name}"
        if isinstance(node, ast.ClassDef):
            for method, found in class_problems(node, is_keras_class(path, node)).items():
                problems[f"{where}.{method}"] = found
        elif found := function_problems(node):
            problems[where] = found
    assert not problems, "\n".join(
        f"{where}: {'; '.join(found)}" for where, found in problems.items()
    )


# The checks themselves: each finds a violation written for it.
LONG = 'def f():\n    """Does f.\n' + "    More.\n" * MAX_LINES + '    """\n'
UNDOCUMENTED = '''
def f(a, b, *args, **kwargs) -> int:
    """Does f.

    Args:
        a: the first.
        *args, **kwargs: the rest.
    """
'''
DOCUMENTED = '''
def f(a, b, *args, **kwargs) -> int:
    """Does f.

    Args:
        a, b: the first two.
        *args, **kwargs: the rest.

    Returns:
        A number.
    """
'''
GENERATOR = '''
def f(a):
    """Yields a.

    Args:
        a: a.
    """
    yield a
'''
UNANNOTATED_RETURN = 'def f():\n    """Does f."""\n    return 1\n'
DATACLASS = '''
@dataclasses.dataclass
class C:
    """A value.

    Attributes:
        a: the first.
    """

    a: int
    b: str = ""
'''
KERAS_CLASS = '''
class M(keras.Model):
    def __init__(self, size):
        """Builds M."""

    def call(self, inputs):
        return inputs
'''


def test_the_checks_find_violations():
    assert long_docstrings(ast.parse(LONG)) == [f"f ({MAX_LINES + 1})"]
    assert long_docstrings(ast.parse(LONG.replace("    More.\n", "", 1))) == []
    [function] = ast.parse(UNDOCUMENTED).body
    assert function_problems(function) == ["Args: misses b", "no Returns: section"]
    [function] = ast.parse(DOCUMENTED).body
    assert function_problems(function) == []
    [function] = ast.parse(DOCUMENTED.replace("a, b, *args", "a, *args")).body
    assert function_problems(function) == ["Args: no parameter b"]
    [function] = ast.parse(GENERATOR).body
    assert function_problems(function) == ["no Yields: section"]
    [function] = ast.parse(UNANNOTATED_RETURN).body
    assert function_problems(function) == ["no Returns: section"]
    [cls] = ast.parse(DATACLASS).body
    assert class_problems(cls) == {"__init__": ["Attributes: misses b"]}
    [cls] = ast.parse(KERAS_CLASS).body
    assert class_problems(cls, keras=True) == {"__init__": ["Args: misses size"]}
    assert set(class_problems(cls)) == {"__init__", "call"}


def test_keras_classes_are_found_through_their_bases():
    models = PACKAGE / "models"
    for path, name, keras in [
        (models / "bert_encoder.py", "BertEncoder", True),  # keras.Model
        (models / "bert_classifier.py", "BertClassifier", True),  # BertTaskModel, keras.Model
        (models / "train_step.py", "GlobalClippingTrainStep", False),
        (PACKAGE / "tokenization" / "vocab.py", "Vocab", False),
    ]:
        _, cls = definition(path, name)
        assert is_keras_class(path, cls) is keras, name
