"""google-research/bert's BasicTokenizer character rules, tabulated for TensorFlow ops.

BasicTokenizer (Model Garden's `FullTokenizer` too) decides everything one
character at a time with Python's `unicodedata` and `str.lower`. The functions
here make the same calls once per process, over every code point, and return
the answers as arrays and RE2 character classes for the graph ops of
`BertNormalizer` and `BertTokenizer`. So the graph follows the reference for the
Unicode version of the Python that builds it, which is the one the reference
tokenizer runs on.

Example:
>>> keys, replacements = normalization_table(lower_case=True)
>>> replacements[list(keys).index(ord("É"))].tolist()  # "e", then padding
[101, -1, -1]
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import numpy as np

# BasicTokenizer._is_chinese_char: the CJK Unified Ideographs blocks (assigned or not).
CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF),
              (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2F800, 0x2FA1F))
CAPITAL_SIGMA, FINAL_SIGMA = 0x3A3, 0x3C2


def is_whitespace(char: str) -> bool:
    """BasicTokenizer's `_is_whitespace`: space, tab, newline, return and category Zs."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
    """BasicTokenizer's `_is_control`: categories Cc and Cf, except tab, newline, return."""
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char: str) -> bool:
    """BasicTokenizer's `_is_punctuation`: ASCII non-alphanumerics and categories P*."""
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(char: str) -> bool:
    """BasicTokenizer's `_is_chinese_char`."""
    return any(first <= ord(char) <= last for first, last in CJK_RANGES)


def _assigned_chars():
    """Every code point except unassigned (Cn), private-use (Co) and surrogates (Cs).

    Those three are left as they are by every rule here: not whitespace, control
    or punctuation, no case, no decomposition.
    """
    for cp in range(sys.maxunicode + 1):
        char = chr(cp)
        if unicodedata.category(char) not in ("Cn", "Co", "Cs"):
            yield char


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
        char = "".join(c for c in unicodedata.normalize("NFD", char.lower())
                       if unicodedata.category(c) != "Mn")
    return "".join(" " if c.isspace() else c for c in char)


@functools.cache
def normalization_table(lower_case: bool) -> tuple[np.ndarray, np.ndarray]:
    """The characters that `normalize_char` changes, and what it makes of them.

    Returns `(keys, replacements)`: sorted int32 code points `[K]`, and int32
    `[K, width]` code points, padded with -1 (a row of -1 removes the character).
    """
    changed = {}
    for char in _assigned_chars():
        normalized = normalize_char(char, lower_case)
        if normalized != char:
            changed[ord(char)] = [ord(c) for c in normalized]
    width = max(map(len, changed.values()))
    replacements = np.full((len(changed), width), -1, np.int32)
    for row, codepoints in enumerate(changed.values()):
        replacements[row, :len(codepoints)] = codepoints
    return np.array(list(changed), np.int32), replacements


def to_ranges(codepoints) -> tuple[tuple[int, int], ...]:
    """Sorted code points -> maximal `(first, last)` runs."""
    ranges = []
    for cp in codepoints:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return tuple(map(tuple, ranges))


@functools.cache
def isolated_ranges() -> tuple[tuple[int, int], ...]:
    """Characters that are always a token of their own: punctuation and CJK."""
    codepoints = {ord(c) for c in _assigned_chars() if is_punctuation(c)}
    for first, last in CJK_RANGES:
        codepoints.update(range(first, last + 1))
    return to_ranges(sorted(codepoints))


@functools.cache
def final_sigma_ranges() -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """`(cased, case_ignorable)` code point ranges, as `str.lower` sees them here.

    `str.lower` turns U+03A3 into the final sigma when a cased character precedes
    it and none follows, skipping case-ignorable characters either way. The
    properties are read off `str.lower` itself, as BasicTokenizer sees the text:
    removed characters are skipped (ignorable), and whitespace and CJK characters
    (which it surrounds with spaces) are neither cased nor ignorable.
    """
    cased, ignorable = [], []
    for char in _assigned_chars():
        normalized = normalize_char(char, lower_case=False)
        if normalized == "":
            ignorable.append(ord(char))
        elif normalized == " " or is_cjk(char):
            continue
        else:
            # "A" + char + "Σ": final iff char is ignorable or cased.
            # "AΣ" + char: final iff char is ignorable or not cased.
            before = ("A" + char + "Σ").lower()[-1] == chr(FINAL_SIGMA)
            after = ("AΣ" + char).lower()[1] == chr(FINAL_SIGMA)
            if before and after:
                ignorable.append(ord(char))
            elif before:
                cased.append(ord(char))
    return to_ranges(cased), to_ranges(ignorable)


def regex_class(ranges) -> str:
    """`(first, last)` ranges -> an RE2 character class such as `[\\x{21}-\\x{2f}]`."""
    parts = (f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}"
             for first, last in ranges)
    return "[" + "".join(parts) + "]"
