"""WordPiece tokenization: the vocab, the tokenizer and its exact BasicTokenizer in TF ops."""

from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.bert_normalizer import BertNormalizer
from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from bert_tf.tokenization.vocab import SPECIAL_TOKENS, Vocab, VocabError

__all__ = [
    "BasicTokenizer",
    "BertNormalizer",
    "BertTokenizer",
    "SPECIAL_TOKENS",
    "Vocab",
    "VocabError",
]
