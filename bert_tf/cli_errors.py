"""Running a command-line main so that bad input ends in one clear line and a non-zero exit."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import traceback

import tensorflow as tf
from absl import flags

from bert_tf.errors import FetchError, UserInputError, word_settings

# Errors that describe the user's input (files, flags, configs, data) or environment (a failed
# download, a path that cannot be read or written), not a bug: each already names the file,
# line, flag or resource, so its message alone is the report. `UserInputError` covers bert_tf's
# own (`ConfigError`, `CorpusError`, `DistributionError`, ...).
USER_ERRORS = (
    UserInputError,
    FetchError,
    OSError,
    flags.Error,
    tf.errors.NotFoundError,
    tf.errors.PermissionDeniedError,
    tf.errors.FailedPreconditionError,
    tf.errors.AlreadyExistsError,
)
# Exit codes besides 1 (a user error): sysexits.h's EX_SOFTWARE for a bug, the shell's for signals.
EXIT_BUG = 70
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
# Keras re-raises an error from a layer's call() as "Exception encountered when calling X.call().",
# a blank line, then the original message (in bold), then the call's arguments.
_KERAS_CALL_CONTEXT = re.compile(r"Exception encountered when calling [^\n]*\n\n(.*)", re.S)
_ANSI_CODES = re.compile(r"\x1b\[[0-9;]*m")


def reject_arguments(argv) -> None:
    """Raises `flags.Error` naming the positional arguments after the program in `argv`, if any."""
    if len(argv) > 1:
        raise flags.Error(f"unexpected arguments: {' '.join(argv[1:])}")


@contextlib.contextmanager
def naming_output_flag(flag: str, value: str):
    """Within the block, an error writing the hidden temporary of an output
    (`io_utils.atomic_output`, `.name.tmp-…`) becomes a `UserInputError` that names `--flag=value`
    and the directory, which the user chose, rather than the temporary, which they never named."""
    try:
        yield
    except (OSError, tf.errors.OpError) as error:
        if isinstance(error, OSError):
            path, reason = error.filename, error.strerror
        else:  # TensorFlow's file errors read "<path>; <reason>"
            path, _, reason = error.message.partition("; ")
        name = os.path.basename(os.fspath(path or ""))
        if not (name.startswith(".") and ".tmp-" in name):
            raise
        raise UserInputError(
            f"--{flag}={value}: cannot write in {os.path.dirname(path) or '.'} "
            f"({reason or type(error).__name__})"
        ) from error


class Terminated(BaseException):
    """SIGTERM, raised in `sigterm_unwinds`: like Ctrl-C, it unwinds the run and its cleanups."""


@contextlib.contextmanager
def sigterm_unwinds():
    """Within the block, SIGTERM raises `Terminated` instead of ending the process at once, so
    that temporary outputs are removed as on Ctrl-C."""

    def raise_terminated(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_reporting_user_errors(main, argv, flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """Calls `main(argv)`, ending each way it can fail with its own exit code.

    - A user error (`USER_ERRORS`) prints `<program>: error: <message>`, with the settings it
      names worded as their flags (those of `flag_values`), and exits 1.
    - Ctrl-C prints `<program>: interrupted` and exits 130; SIGTERM (as `timeout`, Slurm and
      Kubernetes send it) `<program>: terminated` and 143, the shell's codes for SIGINT and
      SIGTERM. Both unwind the run (`sigterm_unwinds`), so its temporary outputs are removed.
    - Any other exception is a bug: a line saying so, its traceback, and exit 70.
    """
    program = (argv[0] if argv else sys.argv[0]).rsplit("/", 1)[-1]
    try:
        with sigterm_unwinds():
            main(argv)
    except USER_ERRORS as error:
        print(f"{program}: error: {_first_line(error, flag_values)}", file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr, flush=True)
        sys.exit(EXIT_INTERRUPTED)
    except Terminated:
        print(f"{program}: terminated", file=sys.stderr, flush=True)
        sys.exit(EXIT_TERMINATED)
    except Exception:  # pylint: disable=broad-except
        print(
            f"{program}: internal error: this is a bug in bert_tf, not a problem with your input; "
            f"please report it with the command line and the traceback below",
            file=sys.stderr,
            flush=True,
        )
        traceback.print_exc()
        sys.stderr.flush()
        sys.exit(EXIT_BUG)


def flag_wording(error: Exception, flag_values: flags.FlagValues = flags.FLAGS) -> str:
    """`error`'s message, with each setting it names that is one of `flag_values` worded as that
    flag: "`max_seq_length`=8 is too short" becomes "--max_seq_length=8 is too short"."""
    if not isinstance(error, UserInputError):
        return str(error)
    words = {name: f"--{name}" for name in error.settings if name in flag_values}
    return word_settings(str(error), words)


def _first_line(error: Exception, flag_values: flags.FlagValues) -> str:
    """The first line of `error`'s message (`flag_wording`), or of the message Keras wrapped in a
    layer's call context; the error's type where that is empty."""
    text = _ANSI_CODES.sub("", flag_wording(error, flag_values)).strip()
    wrapped = _KERAS_CALL_CONTEXT.match(text)
    line = next(iter((wrapped.group(1) if wrapped else text).splitlines()), "").strip()
    return line or type(error).__name__
