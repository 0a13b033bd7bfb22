"""google-research/bert's BasicTokenizer character rules, tabulated for TensorFlow ops.

BasicTokenizer (Model Garden's `FullTokenizer` too) decides everything one
character at a time with Python's `unicodedata` and `str.lower`. The functions
here make the same calls once per process, in bulk over every code point where
they can change the answer, and return the answers as arrays and RE2 character
classes for the graph ops of `BertNormalizer` and `BertTokenizer`. So
the graph follows the reference for the Unicode version of the Python
that builds it, which is the one the reference tokenizer runs on.

Example:
>>> keys, replacements = normalization_table(lower_case=True)
>>> replacements[list(keys).index(ord("É"))].tolist()  # "e", then padding
[101, -1, -1]
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import sys
import unicodedata

import numpy as np

# BasicTokenizer._is_chinese_char: the CJK Unified Ideographs blocks (assigned or not).
CJK_RANGES = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0x2F800, 0x2FA1F),
)
# BasicTokenizer's `_is_punctuation`
ASCII_PUNCTUATION_RANGES = ((33, 47), (58, 64), (91, 96), (123, 126))
CAPITAL_SIGMA, FINAL_SIGMA = 0x3A3, 0x3C2


def is_cjk_char(token: str) -> bool:
    """Whether `token` is one `CJK_RANGES` character: BasicTokenizer makes each a word."""
    return len(token) == 1 and any(first <= ord(token) <= last for first, last in CJK_RANGES)


def is_whitespace(char: str) -> bool:
    """BasicTokenizer's `_is_whitespace`: space, tab, newline, return and category Zs."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
    """BasicTokenizer's `_is_control`: categories Cc and Cf, except tab, newline, return."""
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


@dataclasses.dataclass(frozen=True)
class _Chars:
    """Every code point except unassigned (Cn), private-use (Co) and surrogates (Cs).

    Those three are left as they are by every rule here: not whitespace, control
    or punctuation, no case, no decomposition.
    """

    chars: tuple[str, ...]
    codepoints: np.ndarray  # [chars] int64
    categories: np.ndarray  # [chars] "Lu", "Mn", ...


@functools.cache
def _assigned_chars() -> _Chars:
    categories = map(unicodedata.category, map(chr, range(sys.maxunicode + 1)))
    codepoints = np.flatnonzero(~_flags({"Cn", "Co", "Cs"}.__contains__, categories))
    chars = tuple(map(chr, codepoints.tolist()))
    return _Chars(chars, codepoints, np.array(list(map(unicodedata.category, chars))))


def _flags(function, *iterables) -> np.ndarray:
    """`function` over the items (a C loop for builtins), as a bool array."""
    return np.fromiter(map(function, *iterables), bool)


def _in_ranges(codepoints: np.ndarray, ranges) -> np.ndarray:
    """Which `codepoints` lie in one of the `(first, last)` ranges, bool `[n]`."""
    return np.any([(codepoints >= first) & (codepoints <= last) for first, last in ranges], axis=0)


def normalize_char(char: str, lower_case: bool) -> str:
    """What BasicTokenizer makes of one character, before splitting.

    It drops NUL, U+FFFD and control characters, turns whitespace into a space
    and, when lower-casing, applies `str.lower`, NFD and drops nonspacing marks
    (Mn). Characters `str.split` splits on (U+2028, U+2029) become a space too.
    ASCII A-Z are left upper-case here: `BertTokenizer` lower-cases them per word
    with `tf.strings.lower` (byte for byte the same), after it has found the
    special tokens such as `[CLS]`. The context-dependent final sigma is
    `BertNormalizer`'s job.
    """
    if ord(char) in (0, 0xFFFD) or is_control(char):
        return ""
    if is_whitespace(char):
        return " "
    if lower_case and not "A" <= char <= "Z":
        char = "".join(
            c for c in unicodedata.normalize("NFD", char.lower()) if unicodedata.category(c) != "Mn"
        )
    return "".join(" " if c.isspace() else c for c in char)


@functools.cache
def _changed_chars(lower_case: bool) -> dict[int, str]:
    """Code point -> `normalize_char` of it, for the characters it changes.

    Bulk tests first pick out the characters it might change: the removed
    ones (NUL, U+FFFD, Cc, Cf), whitespace (Zs and `str.isspace`) and, when
    lower-casing, those that `str.lower` or NFD change, and nonspacing marks.
    """
    assigned = _assigned_chars()
    chars = assigned.chars
    maybe = (
        np.isin(assigned.categories, ("Cc", "Cf", "Zs", "Mn"))
        | _flags(str.isspace, chars)
        | np.isin(assigned.codepoints, (0, 0xFFFD))
    )
    if lower_case:
        maybe |= _flags(operator.ne, map(str.lower, chars), chars)
        maybe |= ~_flags(functools.partial(unicodedata.is_normalized, "NFD"), chars)
    changed = {}
    for index in np.flatnonzero(maybe).tolist():
        normalized = normalize_char(chars[index], lower_case)
        if normalized != chars[index]:
            changed[ord(chars[index])] = normalized
    return changed


@functools.cache
def normalization_table(lower_case: bool) -> tuple[np.ndarray, np.ndarray]:
    """The characters that `normalize_char` changes, and what it makes of them.

    Returns `(keys, replacements)`: sorted int32 code points `[K]`, and int32
    `[K, width]` code points, padded with -1 (a row of -1 removes the character).
    """
    changed = _changed_chars(lower_case)
    width = max(map(len, changed.values()))
    replacements = np.full((len(changed), width), -1, np.int32)
    for row, normalized in enumerate(changed.values()):
        replacements[row, : len(normalized)] = [ord(c) for c in normalized]
    return np.array(list(changed), np.int32), replacements


def to_ranges(codepoints) -> tuple[tuple[int, int], ...]:
    """Sorted code points -> maximal `(first, last)` runs."""
    codepoints = np.asarray(codepoints, np.int64)
    if not len(codepoints):
        return ()
    firsts = np.flatnonzero(np.diff(codepoints, prepend=-2) != 1)  # where a run starts
    lasts = np.append(firsts[1:], len(codepoints)) - 1
    return tuple(zip(codepoints[firsts].tolist(), codepoints[lasts].tolist()))


@functools.cache
def isolated_ranges() -> tuple[tuple[int, int], ...]:
    """Characters that are always a token of their own: punctuation and CJK.

    Punctuation is BasicTokenizer's `_is_punctuation`: ASCII non-alphanumerics
    and categories P*; CJK its `_is_chinese_char`, the `CJK_RANGES`.
    """
    assigned = _assigned_chars()
    punctuation = np.char.startswith(assigned.categories, "P") | _in_ranges(
        assigned.codepoints, ASCII_PUNCTUATION_RANGES
    )
    cjk = np.concatenate([np.arange(first, last + 1) for first, last in CJK_RANGES])
    return to_ranges(np.union1d(assigned.codepoints[punctuation], cjk))


@functools.cache
def whitespace_ranges() -> tuple[tuple[int, int], ...]:
    """Python's `str.isspace` characters, which `str.strip` strips (U+3000, U+00A0 among them)."""
    return to_ranges([cp for cp in range(sys.maxunicode + 1) if chr(cp).isspace()])


@functools.cache
def final_sigma_ranges() -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """`(cased, case_ignorable)` code point ranges, as `str.lower` sees them here.

    `str.lower` turns U+03A3 into the final sigma when a cased character precedes
    it and none follows, skipping case-ignorable characters either way. The
    properties are read off `str.lower` itself, as BasicTokenizer sees the text:
    removed characters are skipped (ignorable), and whitespace and CJK characters
    (which it surrounds with spaces) are neither cased nor ignorable.
    """
    assigned = _assigned_chars()
    changed = _changed_chars(lower_case=False)
    removed = np.isin(
        assigned.codepoints, [cp for cp, normalized in changed.items() if normalized == ""]
    )
    spaces = np.isin(
        assigned.codepoints, [cp for cp, normalized in changed.items() if normalized == " "]
    )
    probed = np.flatnonzero(~(removed | spaces | _in_ranges(assigned.codepoints, CJK_RANGES)))
    chars = [assigned.chars[i] for i in probed.tolist()]
    final = chr(FINAL_SIGMA)
    # "A" + char + "Σ": final iff char is ignorable or cased.
    # "AΣ" + char: final iff char is ignorable or not cased.
    before = _flags(
        operator.methodcaller("endswith", final), map(str.lower, map("A{}Σ".format, chars))
    )
    after = _flags(
        operator.methodcaller("startswith", "a" + final), map(str.lower, map("AΣ{}".format, chars))
    )
    ignorable = np.union1d(
        assigned.codepoints[removed], assigned.codepoints[probed[before & after]]
    )
    return to_ranges(assigned.codepoints[probed[before & ~after]]), to_ranges(ignorable)


def build_tables(lower_case: bool) -> None:
    """Computes every table a tokenizer with `lower_case` uses (each is cached per process).

    A process that forks workers calls it first, so that they inherit the tables.
    """
    normalization_table(lower_case)
    isolated_ranges()
    if lower_case:
        final_sigma_ranges()


def regex_class(ranges) -> str:
    """`(first, last)` ranges -> an RE2 character class such as `[\\x{21}-\\x{2f}]`."""
    parts = (
        f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}"
        for first, last in ranges
    )
    return "[" + "".join(parts) + "]"
