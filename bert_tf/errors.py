"""The errors bert_tf raises for what its user can fix: its input, or a failed download."""


class UserInputError(ValueError):
    """Input the user can fix: a file, a flag, a config or the data. The message names it.

    The command line prints such an error as one line and exits 1; any other exception
    is a bug, reported with its traceback.
    """


class FetchError(RuntimeError):
    """A download that failed (no network, no such distribution); the message is pip's last line."""
