"""`BertTokenizer`: BERT's WordPiece tokenization over tensorflow-text, in Python and in graphs."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization.vocab import Vocab


class BertTokenizer(tf.Module):
    """BasicTokenizer + WordPiece, as google-research/bert, on tensorflow-text ops.

    It works on Python strings and on `tf.string` tensors, eagerly, in `tf.data`
    and inside a `tf.function` (so an exported SavedModel tokenizes in-graph).

    Example:
    >>> tokenizer = BertTokenizer("vocab.txt", do_lower_case=True)  # doctest: +SKIP
    >>> tokenizer.tokenize(["Hello world!"]).to_list()  # doctest: +SKIP
    [[7592, 2088, 999]]
    """

    def __init__(self, vocab_file, do_lower_case: bool = True, name: str | None = None):
        super().__init__(name=name)
        self.vocab = Vocab.from_file(vocab_file)
        self.vocab_file = self.vocab.path
        self.do_lower_case = do_lower_case
        self._tokenizer = tf_text.FastBertTokenizer(
            vocab=list(self.vocab.tokens), suffix_indicator="##", max_bytes_per_word=200,
            token_out_type=tf.int32, unknown_token="[UNK]", no_pretokenization=False,
            support_detokenization=True, lower_case_nfd_strip_accents=do_lower_case)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def tokenize(self, texts) -> tf.RaggedTensor:
        """Strings `[batch]` -> WordPiece ids, int32 ragged `[batch, (tokens)]`."""
        ids, _, _ = self.tokenize_with_offsets(texts)
        return ids

    def tokenize_with_offsets(self, texts):
        """Strings `[batch]` -> (ids, starts, ends), each ragged `[batch, (tokens)]`.

        `starts`/`ends` are byte offsets into each UTF-8 input string: token i
        covers `text[starts[i]:ends[i]]` of `text.encode("utf-8")`.
        """
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        ids, starts, ends = self._tokenizer.tokenize_with_offsets(texts)
        return ids, starts, ends

    def detokenize(self, ids) -> tf.Tensor:
        """Ids `[batch, (tokens)]` -> text `[batch]`, with `##` pieces joined."""
        return self._tokenizer.detokenize(ids)

    def convert_ids_to_tokens(self, ids) -> list[str]:
        return [self.vocab.tokens[i] for i in ids]

    def convert_tokens_to_ids(self, tokens) -> list[int]:
        return [self.vocab.token_to_id.get(t, self.vocab.unk_id) for t in tokens]
