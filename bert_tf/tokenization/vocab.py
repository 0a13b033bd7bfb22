"""WordPiece vocab files and BERT's special tokens, looked up by name."""

from __future__ import annotations

import dataclasses
import io
import os
import unicodedata

import tensorflow as tf

from bert_tf import io_utils
from bert_tf.errors import UserInputError

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# Above this share of capitalised tokens a vocab is cased (bert-base-uncased: 0 of 30,522).
CASED_VOCAB_SHARE = 0.01
# Below this share of capitalised tokens, with lower-case letters in more than CASED_VOCAB_SHARE of
# its tokens, a vocab is uncased (bert-base-uncased: 0 capitalised, 91% with lower-case letters).
UNCASED_VOCAB_SHARE = 0.001


class VocabError(UserInputError):
    """A vocab file that cannot be used, with the file named."""


@dataclasses.dataclass(frozen=True)
class Vocab:
    """The tokens of a `vocab.txt` (one per line, id = line number) and the special ids.

    Attributes:
        path: the file read, as a string.
        tokens: the tokens, in id order.
        token_to_id: each token's id.

    Example:
    >>> vocab = Vocab.from_file("vocab.txt")
    >>> len(vocab), vocab.cls_id, vocab.sep_id
    (39, 2, 3)
    """

    path: str
    tokens: tuple[str, ...]
    token_to_id: dict[str, int]

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "Vocab":
        """Reads a `vocab.txt`.

        Args:
            path: the file, local or remote (`tf.io.gfile`).

        Returns:
            The `Vocab`, its special tokens checked.

        Raises:
            VocabError: no such file, not UTF-8, empty, a token twice or a special token
                missing; the message names the file (and line).
        """
        path = io_utils.require_file(path, VocabError, "vocab file")
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise VocabError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
        # Lines as open() splits them, stripped as google-research/bert's load_vocab strips them.
        tokens = tuple(line.strip() for line in io.StringIO(text, newline=None))
        if not tokens:
            raise VocabError(f"{path}: empty vocab file")
        token_to_id = {}
        for i, token in enumerate(tokens):
            if token in token_to_id:
                raise VocabError(
                    f"{path}:{i + 1}: {token!r} is already on line {token_to_id[token] + 1}"
                )
            token_to_id[token] = i
        missing = [t for t in SPECIAL_TOKENS if t not in token_to_id]
        if missing:
            raise VocabError(f"{path}: vocab lacks the special tokens {' '.join(missing)}")
        return cls(path, tokens, token_to_id)

    def __len__(self) -> int:
        return len(self.tokens)

    def _share_changed_by(self, case) -> float:
        """The share of tokens (of all, the special ones never counted) that `case` changes."""
        return sum(
            case(token) != token for token in self.tokens if token not in SPECIAL_TOKENS
        ) / len(self)

    @property
    def capitalized_share(self) -> float:
        """The share of tokens that lower-casing changes: none in an uncased vocab (bar a
        rare symbol), a large part of a cased one."""
        return self._share_changed_by(str.lower)

    @property
    def lower_case_share(self) -> float:
        """The share of tokens with lower-case letters (that upper-casing changes)."""
        return self._share_changed_by(str.upper)

    @property
    def accented_share(self) -> float:
        """The share of tokens with accents (nonspacing marks once decomposed), which lower-casing
        strips: none in bert-base-uncased, many in a vocab
        learned from lower-cased text that kept them."""
        return self._share_changed_by(_strip_accents)

    def check_casing(self, do_lower_case: bool) -> None:
        """Checks, by its tokens, that the vocab's case agrees with `do_lower_case`.

        google-research/bert's `validate_case_matches_checkpoint` knows only the released
        checkpoints' names. A vocab without cased letters (Chinese, say) takes either, and so
        does an uncased vocab that keeps accents: lower-casing would strip them, so such a
        vocab is for text lower-cased beforehand.

        Args:
            do_lower_case: whether the text is lower-cased before WordPiece.

        Raises:
            VocabError: a cased vocab with `do_lower_case` (lower-cased words would never reach
                its capitalised tokens), or an uncased one without it (capitalised words would
                be `[UNK]` or split into pieces).
        """
        capitalized = self.capitalized_share
        if do_lower_case and capitalized > CASED_VOCAB_SHARE:
            raise VocabError(
                f"{self.path}: a cased vocab ({capitalized:.0%} of its tokens have "
                "capitals) with do_lower_case: lower-cased words would miss them; "
                "pass `do_lower_case`=false"
            )
        if (
            not do_lower_case
            and capitalized < UNCASED_VOCAB_SHARE
            and self.lower_case_share > CASED_VOCAB_SHARE
            and self.accented_share < UNCASED_VOCAB_SHARE
        ):
            raise VocabError(
                f"{self.path}: an uncased vocab (no capitalised tokens) without "
                "do_lower_case: capitalised words would be [UNK] or split into "
                "pieces; pass `do_lower_case`=true"
            )

    @property
    def pad_id(self) -> int:
        return self.token_to_id["[PAD]"]

    @property
    def unk_id(self) -> int:
        return self.token_to_id["[UNK]"]

    @property
    def cls_id(self) -> int:
        return self.token_to_id["[CLS]"]

    @property
    def sep_id(self) -> int:
        return self.token_to_id["[SEP]"]

    @property
    def mask_id(self) -> int:
        return self.token_to_id["[MASK]"]


def _strip_accents(token: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn"
    )
