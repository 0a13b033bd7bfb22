"""WordPiece tokenization: the vocab and the tokenizer wrapper."""

from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.tokenization.vocab import SPECIAL_TOKENS, Vocab, VocabError

__all__ = ["BertTokenizer", "SPECIAL_TOKENS", "Vocab", "VocabError"]
