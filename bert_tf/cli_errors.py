"""Running a command-line main so that bad input ends in one clear line and a non-zero exit."""

from __future__ import annotations

import sys

from absl import flags

from bert_tf.training.distribution import DistributionError

# Errors that describe the user's input (files, flags, configs), not a bug: each
# already names the file, line or flag, so its message alone is the report.
USER_ERRORS = (ValueError, DistributionError, FileNotFoundError, flags.Error)


def run_reporting_user_errors(main, argv) -> None:
    """Calls `main(argv)`; a user error prints `<program>: error: <message>` and exits 1."""
    try:
        main(argv)
    except USER_ERRORS as error:
        program = (argv[0] if argv else sys.argv[0]).rsplit("/", 1)[-1]
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"{program}: error: {message}", file=sys.stderr, flush=True)
        sys.exit(1)
