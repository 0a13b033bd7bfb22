"""Top predictions of a pretrained model for a `[MASK]` in a sentence."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


def mask_one_word(
    tokenizer: BertTokenizer, sentence: str, rng: np.random.Generator, max_tokens: int = 60
) -> tuple[list[int], int, int] | None:
    """Token ids of `sentence` with one whole alphabetic word (a single WordPiece) masked.

    Returns (ids without [CLS]/[SEP], masked index, original id), or None when the
    sentence has no such word.
    """
    ids = tokenizer.tokenize([sentence])[0].numpy().tolist()[:max_tokens]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    candidates = [
        i
        for i, token in enumerate(tokens)
        if token.isalpha()
        and len(token) > 2
        and not (i + 1 < len(tokens) and tokens[i + 1].startswith("##"))
    ]
    if not candidates:
        return None
    index = int(rng.choice(candidates))
    original = ids[index]
    ids[index] = tokenizer.vocab.mask_id
    return ids, index, original


def mask_chinese_word(
    sentence: str, words: list[str], vocab_tokens: set[str], rng: np.random.Generator
) -> tuple[str, str] | None:
    """`sentence` with one of its `words` (a segmenter's) of 2 to 4 Chinese characters, all in the
    vocab, replaced by a `[MASK]` per character: (the
    masked text, the word); None without such a word."""
    starts = np.cumsum([0] + [len(w) for w in words[:-1]])
    candidates = [
        i
        for i, word in enumerate(words)
        if 2 <= len(word) <= 4
        and all(unicode_tables.is_cjk_char(c) and c in vocab_tokens for c in word)
    ]
    if not candidates:
        return None
    i = int(rng.choice(candidates))
    return sentence[: starts[i]] + "[MASK]" * len(words[i]) + sentence[
        starts[i] + len(words[i]) :
    ], words[i]


def top_predictions(
    model: BertPretrainer, tokenizer: BertTokenizer, ids: list[int], index: int, k: int = 5
) -> list[tuple[str, float]]:
    """The `k` most likely tokens (and probabilities) at `ids[index]`."""
    return predictions_at(model, tokenizer, ids, [index], k)[0]


def predictions_at(
    model: BertPretrainer, tokenizer: BertTokenizer, ids: list[int], indices: list[int], k: int = 5
) -> list[list[tuple[str, float]]]:
    """The `k` most likely tokens (and probabilities) at each of `ids[indices]`."""
    vocab = tokenizer.vocab
    sequence = [vocab.cls_id, *ids, vocab.sep_id]
    features = {
        "input_ids": tf.constant([sequence], tf.int32),
        "input_mask": tf.ones([1, len(sequence)], tf.int32),
        "segment_ids": tf.zeros([1, len(sequence)], tf.int32),
        "masked_lm_positions": tf.constant([[i + 1 for i in indices]], tf.int32),  # +1 for [CLS]
    }
    # [indices, vocab]
    probabilities = tf.nn.softmax(model(features)["masked_lm_logits"][0]).numpy()
    best = np.argsort(-probabilities, axis=-1)[:, :k]
    return [[(vocab.tokens[i], float(p[i])) for i in row] for p, row in zip(probabilities, best)]
