"""`eval_results.txt`: google-research/bert's record of an evaluation, one `name = value` a line."""

from __future__ import annotations

import os

from bert_tf import io_utils

EVAL_RESULTS = "eval_results.txt"


def write_eval_results(output_dir: str, results: dict) -> str:
    """Writes `results`, sorted by name, to `output_dir/eval_results.txt` atomically; returns it."""
    path = os.path.join(output_dir, EVAL_RESULTS)
    io_utils.atomic_write_text(
        path, "".join(f"{name} = {value}\n" for name, value in sorted(results.items()))
    )
    return path
