"""`list_flags_in_help`: a script's `--help` lists the flags that bert_tf's modules define for it."""

from __future__ import annotations

import sys

from absl import flags


def list_flags_in_help(flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """Makes every flag a bert_tf module defined a key flag of the running script.

    absl's `--help` lists only the key flags of the main module (the script), and our
    scripts define theirs in bert_tf modules; without this, only `--helpfull` (which
    also lists TensorFlow's and absl's own) shows them. Call it before `app.run`.
    """
    for module, module_flags in flag_values.flags_by_module_dict().items():
        if module.startswith("bert_tf."):
            for flag in module_flags:
                flag_values.register_key_flag_for_module(sys.argv[0], flag)
