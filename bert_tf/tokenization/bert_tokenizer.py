"""`BertTokenizer`: BERT's WordPiece tokenization over tensorflow-text, in Python and in graphs."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.input_packing import pack_segments
from bert_tf.tokenization.vocab import Vocab

# Printable ASCII without "[": BasicTokenizer only lower-cases such text, and it holds no
# special token, so tensorflow-text's end-to-end WordPiece (which splits on ASCII
# whitespace and punctuation exactly as BasicTokenizer does) tokenizes it as is.
_ASCII_TEXT = r"[\x20-\x5a\x5c-\x7e]*"
# With the special tokens split at the brackets, "[" is punctuation like any other.
_ASCII_TEXT_WITH_BRACKETS = r"[\x20-\x7e]*"


class BertTokenizer(tf.Module):
    """BasicTokenizer + WordPiece, as google-research/bert, on tensorflow-text ops.

    The ids are those of Model Garden's `FullTokenizer` (google-research/bert's
    tokenization.py), with its Python `unicodedata` rules (`unicode_tables`), but
    for two choices: the special tokens (`[CLS]`, `[SEP]`, `[MASK]`, `[UNK]`,
    `[PAD]`, case-sensitive) stay one token wherever they are in the text (the
    reference splits them at the brackets), and words of more than
    `max_chars_per_word` characters (after normalization) become `[UNK]`: 200 as
    in google-research/bert, where Model Garden's copy allows 400.
    `split_special_tokens=True` splits them as the reference does: for corpus
    text (pretraining data), where a literal `[SEP]` is text, not the separator.

    Lines of printable ASCII without `[` (with `split_special_tokens`, `[` too)
    go straight to tensorflow-text's end-to-end `FastWordpieceTokenizer`; the
    other lines go through `BasicTokenizer`, then the same WordPiece on the
    words. It works on Python strings and on `tf.string` tensors, eagerly, in
    `tf.data` and inside a `tf.function` (so an exported SavedModel tokenizes
    in-graph). tensorflow-text
    ops in the graph: FastWordpieceTokenizeWithOffsets and RegexSplitWithOffsets;
    TFText>FastWordpieceDetokenize for `detokenize`. The rest, `pack_inputs`
    included, are core TF ops.

    Args:
        vocab_file: the `vocab.txt`, local or remote (`tf.io.gfile`).
        do_lower_case: lower-case and strip accents first, for an uncased vocab.
        max_chars_per_word: longer words (after normalization) become `[UNK]`.
        split_special_tokens: split the special tokens at the brackets, as in corpus text.
        name: the `tf.Module`'s name.

    Raises:
        VocabError: a vocab file that cannot be used, or whose case disagrees with
            `do_lower_case` (`Vocab.check_casing`).

    Example:
    >>> tokenizer = BertTokenizer("vocab.txt", do_lower_case=True)
    >>> tokenizer.tokenize(["Hello world!"]).to_list()
    [[17, 18, 7]]
    >>> tokenizer.pack_inputs([tokenizer.tokenize(["Hello world!"])], 6)["input_word_ids"]
    <tf.Tensor: shape=(1, 6), dtype=int32, numpy=array([[ 2, 17, 18,  7,  3,  0]], dtype=int32)>
    """

    def __init__(
        self,
        vocab_file,
        do_lower_case: bool = True,
        max_chars_per_word: int = 200,
        split_special_tokens: bool = False,
        name: str | None = None,
    ):
        super().__init__(name=name)
        self.vocab = Vocab.from_file(vocab_file)
        self.vocab_file = self.vocab.path
        self.vocab.check_casing(do_lower_case)
        self.do_lower_case = do_lower_case
        self.max_chars_per_word = max_chars_per_word
        vocab, unk = list(self.vocab.tokens), self.vocab.tokens[self.vocab.unk_id]
        self._ascii_wordpiece = tf_text.FastWordpieceTokenizer(
            vocab, max_bytes_per_word=max_chars_per_word, token_out_type=tf.int32, unknown_token=unk
        )
        # Words come split and normalized; a word within the limit has at most 4 bytes a character.
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            vocab,
            max_bytes_per_word=4 * max_chars_per_word,
            token_out_type=tf.int32,
            unknown_token=unk,
            no_pretokenization=True,
            support_detokenization=True,
        )
        self._basic_tokenizer = BasicTokenizer(do_lower_case, split_special_tokens)
        self._unk_token = unk
        self._ascii_text = _ASCII_TEXT_WITH_BRACKETS if split_special_tokens else _ASCII_TEXT

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def tokenize(self, texts) -> tf.RaggedTensor:
        """Tokenizes text into WordPiece ids.

        Args:
            texts: UTF-8 strings `[batch]`, Python or `tf.string`, or a single string.

        Returns:
            The ids, int32 ragged `[batch, (tokens)]`; 1-D for a single string.
        """
        return self._tokenize(texts, unit=None)[0]

    def tokenize_words(self, texts) -> tf.RaggedTensor:
        """WordPiece ids by word: the shape TF Hub's BERT preprocessors' `tokenize` returns.

        Merging the last two dimensions gives `tokenize(texts)`. Every row goes through
        `BasicTokenizer`, so this is slower than `tokenize` on ASCII text.

        Args:
            texts: UTF-8 strings `[batch]`, Python or `tf.string`.

        Returns:
            The ids, int32 ragged `[batch, (words), (pieces)]`.

        Example:
        >>> tokenizer = BertTokenizer("vocab.txt")
        >>> tokenizer.tokenize_words(["Hello world!"]).to_list()
        [[[17], [18], [7]]]
        """
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        if texts.shape.rank != 1:
            raise ValueError(f"texts must be a batch of strings [batch], got shape {texts.shape}")
        words = self._basic_tokenizer.tokenize(texts)
        return words.with_flat_values(
            self._wordpiece.tokenize(self._unk_if_too_long(words.flat_values)[0])
        )

    def tokenize_with_offsets(self, texts, unit: str = "BYTE"):
        """Tokenizes text into WordPiece ids, with each token's span in the text.

        A token covers the input characters it came from and the ones normalization removed
        right after them (accents, format characters), as tensorflow-text's tokenizers do.

        Args:
            texts: UTF-8 strings `[batch]`, Python or `tf.string`, or a single string.
            unit: "BYTE": token i covers `text.encode("utf-8")[starts[i]:ends[i]]`;
                "UTF8_CHAR": it covers `text[starts[i]:ends[i]]` (code point offsets).

        Returns:
            `(ids, starts, ends)`: int32 ids and int64 offsets, each ragged
            `[batch, (tokens)]`; 1-D for a single string.
        """
        if unit not in ("BYTE", "UTF8_CHAR"):
            raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
        return self._tokenize(texts, unit=unit)

    def detokenize(self, ids) -> tf.Tensor:
        """Turns ids back into text, with the `##` pieces joined to their words.

        Args:
            ids: int ids `[batch, (tokens)]`, as `tokenize` gives them.

        Returns:
            The texts, strings `[batch]`.
        """
        return self._wordpiece.detokenize(ids)

    def pack_inputs(
        self, segments, seq_length, pad_to_seq_length: bool = True
    ) -> dict[str, tf.Tensor]:
        """The encoder's inputs, `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, from 1 or 2 segments.

        Segments that do not fit are cut at their ends, round robin, as `_truncate_seq_pair`.

        Args:
            segments: one or two ragged id batches, `[batch, (tokens)]` or `tokenize_words`'s.
            seq_length: the most tokens a row keeps; an int, or a scalar tensor in a graph.
            pad_to_seq_length: False: pad only to the batch's longest row, as serving wants.

        Returns:
            int32 `input_word_ids`, `input_mask`, `input_type_ids`, each `[batch, seq_length]`
            or, without `pad_to_seq_length`, `[batch, <= seq_length]`.

        Raises:
            UserInputError: an int `seq_length` with no room for a token besides `[CLS]`/`[SEP]`.
        """
        if isinstance(segments, (tf.Tensor, tf.RaggedTensor)):
            segments = [segments]
        segments = [
            segment.merge_dims(1, 2)
            if isinstance(segment, tf.RaggedTensor) and segment.ragged_rank == 2
            else segment
            for segment in segments
        ]
        return pack_segments(
            segments,
            seq_length,
            self.vocab.cls_id,
            self.vocab.sep_id,
            self.vocab.pad_id,
            pad_to_seq_length,
        )

    def convert_ids_to_tokens(self, ids) -> list[str]:
        """The vocab's tokens for `ids`.

        Args:
            ids: ids of the vocab.

        Returns:
            The tokens, in the order of `ids`.
        """
        return [self.vocab.tokens[i] for i in ids]

    def convert_tokens_to_ids(self, tokens) -> list[int]:
        """The vocab's ids for `tokens`.

        Args:
            tokens: WordPiece tokens; one the vocab lacks gets `[UNK]`'s id.

        Returns:
            The ids, in the order of `tokens`.
        """
        return [self.vocab.token_to_id.get(t, self.vocab.unk_id) for t in tokens]

    def _tokenize(self, texts, unit):
        """(ids, starts, ends), or ids alone when `unit` is None, in the input's row order."""
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        if texts.shape.rank == 0:
            return tuple(t.flat_values for t in self._tokenize(texts[None], unit))
        if texts.shape.rank != 1:
            raise ValueError(
                f"texts must be a string or a batch of strings [batch], got shape {texts.shape}"
            )
        return self._route(texts, unit, self._tokenize_exactly)

    def _route(self, texts, unit, tokenize_other):
        """Rows of printable ASCII without `[` (unless the special tokens are split) through the
        end-to-end WordPiece, the others through `tokenize_other(texts, unit)`; the results in the
        input's row order."""
        is_ascii = tf.strings.regex_full_match(texts, self._ascii_text)
        # Serving requests are mostly all ASCII: then the end-to-end WordPiece is all that runs.
        return tf.cond(
            tf.reduce_all(is_ascii),
            lambda: self._tokenize_ascii(texts, unit),
            lambda: self._route_mixed(texts, is_ascii, unit, tokenize_other),
        )

    def _tokenize_ascii(self, texts, unit):
        """The end-to-end WordPiece; its offsets are bytes and characters alike."""
        if self.do_lower_case:
            texts = tf.strings.lower(texts)
        if unit is None:
            return (self._ascii_wordpiece.tokenize(texts),)
        return tuple(self._ascii_wordpiece.tokenize_with_offsets(texts))

    def _route_mixed(self, texts, is_ascii, unit, tokenize_other):
        ascii_rows, other_rows = tf.where(is_ascii)[:, 0], tf.where(~is_ascii)[:, 0]
        ascii_tokens = self._tokenize_ascii(tf.gather(texts, ascii_rows), unit)
        other_tokens = tokenize_other(tf.gather(texts, other_rows), unit)
        order = tf.math.invert_permutation(tf.concat([ascii_rows, other_rows], 0))
        return tuple(
            tf.gather(tf.concat([a, b], 0), order) for a, b in zip(ascii_tokens, other_tokens)
        )

    def _tokenize_exactly(self, texts, unit):
        """BasicTokenizer, then WordPiece; offsets mapped back to `texts`."""
        if unit is None:
            # BasicTokenizer never joins text across a space, and most space-separated
            # pieces of these rows are plain ASCII too: route the pieces again.
            pieces = tf.strings.split(texts, " ")
            ids = self._route(pieces.flat_values, unit, self._tokenize_pieces_exactly)[0]
            return (pieces.with_flat_values(ids).merge_dims(1, 2),)
        words, word_starts, word_ends, offsets_map = (
            self._basic_tokenizer.tokenize_with_offsets_map(texts)
        )
        flat, too_long = self._unk_if_too_long(words.flat_values)
        ids, starts, ends = self._wordpiece.tokenize_with_offsets(flat)
        tokens = words.with_flat_values(ids).merge_dims(1, 2)
        word = ids.value_rowids()
        word_starts = tf.gather(word_starts.flat_values, word)
        starts = word_starts + starts.flat_values
        ends = tf.where(
            tf.gather(too_long, word),
            tf.gather(word_ends.flat_values, word),
            word_starts + ends.flat_values,
        )
        starts, ends = self._basic_tokenizer.normalizer.find_source_offsets(
            offsets_map, tokens.with_flat_values(starts), tokens.with_flat_values(ends), unit
        )
        return tokens, starts, ends

    def _tokenize_pieces_exactly(self, texts, unit):
        """BasicTokenizer, then WordPiece, ids only (`unit` is None)."""
        return (self.tokenize_words(texts).merge_dims(1, 2),)

    def _unk_if_too_long(self, words):
        """Words `[n]` -> (the words, `[UNK]` for those over `max_chars_per_word` characters;
        which ones those are)."""
        too_long = tf.strings.length(words, unit="UTF8_CHAR") > self.max_chars_per_word
        return tf.where(too_long, self._unk_token, words), too_long
