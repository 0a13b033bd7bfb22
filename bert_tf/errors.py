"""The errors bert_tf raises for what its user can fix: its input, or a failed download."""

import re

# How a message names a setting: its name in backticks, as in "`max_seq_length`=8 is too short".
_SETTING = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


class UserInputError(ValueError):
    """Input the user can fix: a file, a setting, a config or the data. The message names it.

    A message names each setting it is about (an argument or option, by the name the caller
    gave it) in backticks: "`max_seq_length`=8 is too short". The command line prints such an
    error as one line, with each setting that is one of its flags worded as the flag
    (`--max_seq_length=8`), and exits 1; any other exception is a bug, reported with its
    traceback.
    """

    @property
    def settings(self) -> tuple[str, ...]:
        """The settings the message names, in order, each once."""
        return tuple(dict.fromkeys(_SETTING.findall(str(self))))


class FetchError(RuntimeError):
    """A download that failed (no network, no such distribution); the message is pip's last line."""


def word_settings(message: str, words: dict[str, str]) -> str:
    """`message` with each backticked setting in `words` replaced by its word there.

    Example (the command line's wording):
        word_settings("`doc_stride`=0 must be positive", {"doc_stride": "--doc_stride"})
        # "--doc_stride=0 must be positive"
    """
    return _SETTING.sub(lambda match: words.get(match.group(1), match.group(0)), message)
