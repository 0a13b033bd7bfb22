"""Top predictions of a pretrained model for a `[MASK]` in a sentence."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


def mask_one_word(tokenizer: BertTokenizer, sentence: str, rng: np.random.Generator,
                  max_tokens: int = 60) -> tuple[list[int], int, int] | None:
    """Token ids of `sentence` with one whole alphabetic word (a single WordPiece) masked.

    Returns (ids without [CLS]/[SEP], masked index, original id), or None when the
    sentence has no such word.
    """
    ids = tokenizer.tokenize([sentence])[0].numpy().tolist()[:max_tokens]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    candidates = [i for i, token in enumerate(tokens)
                  if token.isalpha() and len(token) > 2
                  and not (i + 1 < len(tokens) and tokens[i + 1].startswith("##"))]
    if not candidates:
        return None
    index = int(rng.choice(candidates))
    original = ids[index]
    ids[index] = tokenizer.vocab.mask_id
    return ids, index, original


def top_predictions(model: BertPretrainer, tokenizer: BertTokenizer, ids: list[int], index: int,
                    k: int = 5) -> list[tuple[str, float]]:
    """The `k` most likely tokens (and probabilities) at `ids[index]`."""
    vocab = tokenizer.vocab
    sequence = [vocab.cls_id, *ids, vocab.sep_id]
    features = {
        "input_ids": tf.constant([sequence], tf.int32),
        "input_mask": tf.ones([1, len(sequence)], tf.int32),
        "segment_ids": tf.zeros([1, len(sequence)], tf.int32),
        "masked_lm_positions": tf.constant([[index + 1]], tf.int32),  # +1 for [CLS]
    }
    probabilities = tf.nn.softmax(model(features)["masked_lm_logits"][0, 0]).numpy()
    best = np.argsort(-probabilities)[:k]
    return [(vocab.tokens[i], float(probabilities[i])) for i in best]
