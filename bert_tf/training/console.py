"""How long jobs show their progress: a redrawn bar on a terminal, lines in a log file."""

from __future__ import annotations

import sys


def on_terminal() -> bool:
    """True when stdout is a terminal. Keras redraws its progress bar with backspaces and carriage
    returns on every POSIX system, which a log file would keep as one unreadable line."""
    return sys.stdout.isatty()


def keras_verbose() -> int:
    """Keras's `fit`/`predict` `verbose`: 1 (a bar) on a terminal, else 2 (a line an epoch)."""
    return 1 if on_terminal() else 2
