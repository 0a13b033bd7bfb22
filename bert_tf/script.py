"""`run`: a script's absl main, with `--help` listing bert_tf's flags and answering before TensorFlow loads,
and an exit that skips the collector's last pass over TensorFlow's objects."""

from __future__ import annotations

import gc
import importlib
import sys

from absl import app, flags


def run(main: str) -> None:
    """Runs the absl main `main` ("package.module:function") on the command line's flags.

    The script has defined its flags, in modules that import no TensorFlow; the main's module
    is imported only once they parse, so `--help` and a bad flag answer in a fraction of a
    second rather than after TensorFlow's import (seconds). Every flag a bert_tf module
    defined is listed by `--help`: absl lists only the main module's key flags, and our
    scripts define theirs in bert_tf, so that otherwise only `--helpfull` (which also lists
    TensorFlow's and absl's own) would show them.

    Example (a whole script):
        define_pretraining_flags()
        script.run("bert_tf.pretraining.cli:main")
    """
    for module, module_flags in flags.FLAGS.flags_by_module_dict().items():
        if module.startswith("bert_tf."):
            for flag in module_flags:
                flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)
    module, function = main.split(":")
    app.run(lambda argv: _run_then_freeze(getattr(_import_without_collections(module), function), argv))


def _run_then_freeze(main, argv):
    """`main(argv)`, then every object moved out of the collector's sight (`gc.freeze`): the
    interpreter's exit would otherwise collect over TensorFlow's object graph (about 2 s)."""
    try:
        return main(argv)
    finally:
        gc.freeze()


def _import_without_collections(module: str):
    """`module`, imported with the garbage collector off: TensorFlow's import would otherwise run
    collections over its growing object graph (about 1 s)."""
    gc.disable()
    try:
        return importlib.import_module(module)
    finally:
        gc.enable()
