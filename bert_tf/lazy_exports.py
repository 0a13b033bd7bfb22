"""`lazy_exports`: a package's public names, each imported from its module on first use.

The scripts' flag modules import no TensorFlow, so that `--help` and a bad flag answer at
once; the packages that hold them (and `bert_tf` itself) therefore export their names lazily.
"""

from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict[str, str]):
    """The module-level `__getattr__` and `__dir__` (PEP 562) of `package`'s `__init__`,
    where `exports` maps each public name to the module that defines it.

    Example (a package's `__init__.py`):
        _EXPORTS = {"run_finetuning": "bert_tf.finetuning.driver"}
        __all__ = sorted(_EXPORTS)
        __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    """

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    def __dir__() -> list[str]:
        return sorted({*vars(importlib.import_module(package)), *exports})

    return __getattr__, __dir__
