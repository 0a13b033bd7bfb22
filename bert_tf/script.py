"""`run`: a script's absl main, with `--help` listing bert_tf's flags and answering before
TensorFlow loads, TensorFlow's C++ INFO logging off by default, and TensorFlow's objects kept out of
the garbage collector's way."""

from __future__ import annotations

import atexit
import gc
import importlib
import os
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
    # TensorFlow's C++ INFO lines (oneDNN, CPU features, the XLA service, an input's end) would
    # bury the script's own output; its warnings and errors still show. The variable overrides.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    module, function = main.split(":")
    app.run(lambda argv: getattr(import_out_of_the_collectors_way(module), function)(argv))


def import_out_of_the_collectors_way(module: str):
    """`module`, imported with Python's garbage collector off, then everything alive frozen
    (`gc.freeze`): later collections, while tracing and training, skip TensorFlow's objects
    instead of walking them over and over. A freeze at exit also spares the interpreter a last
    collection over all of them (together, seconds off a script).

    Example (a worker process that imports TensorFlow itself):
        import_out_of_the_collectors_way("tensorflow")
    """
    gc.disable()
    try:
        return importlib.import_module(module)
    finally:
        gc.freeze()
        gc.enable()
        atexit.unregister(gc.freeze)  # registered once, however many imports ask for it
        atexit.register(gc.freeze)
