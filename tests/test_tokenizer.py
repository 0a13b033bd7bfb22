"""BertTokenizer against Model Garden's FullTokenizer (google-research/bert's tokenization.py)."""

import random
import sys
import unicodedata

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from official.nlp.tools import tokenization as reference

from bert_test_utils import REPO, write_cased_vocab, write_word_vocab
from bert_tf.tokenization import BasicTokenizer, BertTokenizer, unicode_tables

# Characters where BasicTokenizer's rules bite: case, accents and combining marks, the
# final sigma and its context, controls, format characters, Unicode spaces, CJK (and its
# compatibility forms), Hangul, punctuation outside ASCII, NFD turning symbols into ASCII
# punctuation, spacing marks, and letters whose lower case is longer.
TRICKY = list("aAbBzZ09 .,;:'\"-()#$%^`~_") + [
    "Σ",
    "σ",
    "ς",
    "Α",
    "ο",
    "\u0345",
    "\u0301",
    "\u0300",
    "\u00ad",
    "\u200d",
    "\u200b",
    "\ufeff",
    "\x00",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\x7f",
    "\t",
    "\n",
    "\r",
    "\u00a0",
    "\u2028",
    "\u2029",
    "\u3000",
    "\u2003",
    "中",
    "文",
    "\uf900",
    "\U0002f800",
    "\U00020000",
    "ㄱ",
    "가",
    "힣",
    "İ",
    "ı",
    "ß",
    "\u212a",
    "Å",
    "é",
    "ñ",
    "ﬁ",
    "…",
    "´",
    "½",
    "²",
    "≠",
    "≮",
    "\u037e",
    "\u0387",
    "\u1fef",
    "\U0001d165",
    "😀",
    "ǅ",
    "ẞ",
    "ϐ",
    "ϴ",
    "\ufffd",
    "\u2019",
    "ʹ",
    "ː",
    "é",
]


@pytest.fixture(scope="module")
def wiki_lines(wikipedia_sample_lines):
    return [line for line in wikipedia_sample_lines if line.strip()]


@pytest.fixture(scope="module")
def cased_vocab(uncased_vocab_file, wiki_lines, tmp_path_factory):
    return write_cased_vocab(
        uncased_vocab_file, wiki_lines, tmp_path_factory.mktemp("cased") / "vocab.txt"
    )


@pytest.fixture(scope="module")
def tokenizers(uncased_vocab_file, cased_vocab):
    """`lower_case -> (ours, reference)`, the reference with google-research/bert's 200-char cap."""
    pairs = {}
    for lower_case, vocab in ((True, uncased_vocab_file), (False, cased_vocab)):
        full = reference.FullTokenizer(vocab, do_lower_case=lower_case)
        full.wordpiece_tokenizer.max_input_chars_per_word = 200
        pairs[lower_case] = BertTokenizer(vocab, do_lower_case=lower_case), full
    return pairs


@pytest.fixture(scope="module")
def tokenizer(tokenizers):
    return tokenizers[True][0]


def reference_ids(full, texts):
    return [full.convert_tokens_to_ids(full.tokenize(text)) for text in texts]


def tokens(tokenizer, text):
    return tokenizer.convert_ids_to_tokens(tokenizer.tokenize([text])[0].numpy())


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_wikipedia_ids_match_full_tokenizer(lower_case, tokenizers, wiki_lines):
    assert len(wiki_lines) >= 10_000
    ours, _ = tokenizers[lower_case]
    full = reference.FullTokenizer(ours.vocab_file, do_lower_case=lower_case)  # as shipped
    expected = reference_ids(full, wiki_lines)
    got = ours.tokenize(wiki_lines).to_list()
    mismatches = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    print(
        f"{'uncased' if lower_case else 'cased'}: {len(mismatches)} mismatching lines of "
        f"{len(wiki_lines)} ({sum(map(len, expected))} tokens) vs FullTokenizer"
    )
    assert not mismatches, [wiki_lines[i] for i in mismatches[:3]]


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_tokenize_words_groups_the_same_ids_by_word(lower_case, tokenizers, wiki_lines):
    ours, full = tokenizers[lower_case]
    texts = wiki_lines[:2000] + ["a" * 201 + " é", "", "Hello, world!"]
    words = ours.tokenize_words(texts)
    assert words.merge_dims(1, 2).to_list() == ours.tokenize(texts).to_list()
    # One group per word of the reference's BasicTokenizer, which splits special tokens
    # at the brackets, where ours keeps them whole.
    assert words.row_lengths().numpy().tolist() == [
        len(full.basic_tokenizer.tokenize(text)) for text in texts
    ]
    assert ours.tokenize_words(["[CLS] x[MASK]y"]).row_lengths().numpy().tolist() == [4]


def test_every_code_point_follows_the_reference_rules():
    basic = {lower: reference.BasicTokenizer(do_lower_case=lower) for lower in (True, False)}
    tables = {}
    for lower in (True, False):
        keys, replacements = unicode_tables.normalization_table(lower)
        tables[lower] = {
            int(key): "".join(chr(cp) for cp in row if cp >= 0)
            for key, row in zip(keys, replacements)
        }
    isolated = set()
    for first, last in unicode_tables.isolated_ranges():
        isolated.update(range(first, last + 1))
    for cp in range(sys.maxunicode + 1):
        char = chr(cp)
        assert (cp in isolated) == (
            reference._is_punctuation(char) or basic[True]._is_chinese_char(cp)
        )
        if unicodedata.category(char) in ("Cn", "Co", "Cs"):  # left alone by every rule
            continue
        for lower, table in tables.items():
            expected = basic[lower]._clean_text(char)
            if lower and expected.strip() and not "A" <= char <= "Z":  # A-Z: lower-cased per word
                expected = basic[lower]._run_strip_accents(expected.lower())
            # str.split splits there
            expected = "".join(" " if c.isspace() else c for c in expected)
            assert table.get(cp, char) == expected, (hex(cp), lower)


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_random_unicode_text_matches_full_tokenizer(lower_case, tokenizers):
    ours, full = tokenizers[lower_case]
    rng = random.Random(0)
    texts = ["".join(rng.choices(TRICKY, k=rng.randint(0, 30))) for _ in range(2000)]
    assert ours.tokenize(texts).to_list() == reference_ids(full, texts)
    basic = reference.BasicTokenizer(do_lower_case=lower_case)
    words = BasicTokenizer(lower_case).tokenize(texts).to_list()
    assert [[w.decode() for w in row] for row in words] == [basic.tokenize(t) for t in texts]


def test_accents_stripped_only_when_lower_casing(tokenizers):
    text = "Éléphant naïve Ångström cafe\u0301 İstanbul"
    assert tokens(tokenizers[True][0], text) == tokens(
        tokenizers[True][0], "elephant naive angstrom cafe istanbul"
    )
    assert "é" in "".join(tokens(tokenizers[False][0], text))
    for ours, full in tokenizers.values():
        assert ours.tokenize([text]).to_list() == reference_ids(full, [text])


def test_cjk_and_punctuation_are_split(tokenizers):
    text = "日本人x中国, hello!!¿qué?—x"
    assert tokens(tokenizers[True][0], text) == [
        "日",
        "本",
        "人",
        "x",
        "中",
        "国",
        ",",
        "hello",
        "!",
        "!",
        "¿",
        "que",
        "?",
        "—",
        "x",
    ]
    for ours, full in tokenizers.values():
        assert ours.tokenize([text]).to_list() == reference_ids(full, [text])


def test_control_and_whitespace_characters(tokenizers):
    text = "a\x00b\u200bc\td\u00a0e\u2028f\x0bg\r\nh\ufeffi\x7f j\u3000k\ufffd"
    # Controls, format characters and U+FFFD vanish (joining their neighbours); spaces split.
    assert tokens(tokenizers[True][0], text) == ["abc", "d", "e", "f", "##g", "hi", "j", "k"]
    for ours, full in tokenizers.values():
        assert ours.tokenize([text]).to_list() == reference_ids(full, [text])


def test_greek_final_sigma(tokenizers):
    texts = ["ΟΔΟΣ", "ΟΔΟΣ.", "ΑΣ.Β", "Σ", "ΑΣΣ", "Α\u00adΣ", "ΑΣ\u0301 b", "ΑΣ中"]
    ours, full = tokenizers[True]
    assert ours.tokenize(texts).to_list() == reference_ids(full, texts)
    assert tokens(ours, "ΟΔΟΣ")[-1].endswith("ς")


def test_unk_for_words_longer_than_200_characters(tokenizers, uncased_vocab_file):
    ours, full = tokenizers[True]
    unk = ours.vocab.unk_id
    texts = ["a" * 200, "a" * 201, "é" * 150, "é" * 201, "x " + "ab" * 101 + "!"]
    got = ours.tokenize(texts).to_list()
    assert got == reference_ids(full, texts)
    assert [unk in row for row in got] == [False, True, False, True, True]
    # Model Garden's FullTokenizer as shipped allows 400 characters.
    ours_400 = BertTokenizer(uncased_vocab_file, max_chars_per_word=400)
    texts = ["a" * 300, "é" * 300, "a" * 401]
    assert ours_400.tokenize(texts).to_list() == reference_ids(
        reference.FullTokenizer(uncased_vocab_file), texts
    )


def test_special_tokens_kept_whole(tokenizers):
    ours, full = tokenizers[True]
    vocab = ours.vocab
    ids = ours.tokenize(["[CLS] who? [SEP] x[MASK]y [UNK][PAD] [cls]"])[0].numpy().tolist()
    assert ids[:4] == [
        vocab.cls_id,
        ours.convert_tokens_to_ids(["who"])[0],
        ours.convert_tokens_to_ids(["?"])[0],
        vocab.sep_id,
    ]
    assert ids[4:9] == [
        ours.convert_tokens_to_ids(["x"])[0],
        vocab.mask_id,
        ours.convert_tokens_to_ids(["y"])[0],
        vocab.unk_id,
        vocab.pad_id,
    ]
    assert tokens(ours, "[cls]") == full.tokenize("[cls]") == ["[", "cl", "##s", "]"]
    assert full.tokenize("[CLS]") == ["[", "cl", "##s", "]"]  # the reference splits them
    assert tokens(tokenizers[False][0], "[MASK] Paris") == ["[MASK]", "Paris"]


@pytest.mark.parametrize("lower_case", [True, False], ids=["uncased", "cased"])
def test_split_special_tokens_splits_them_as_the_reference(lower_case, tokenizers):
    ours, full = tokenizers[lower_case]
    split = BertTokenizer(ours.vocab_file, do_lower_case=lower_case, split_special_tokens=True)
    rng = random.Random(2)
    specials = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[", "]", " "]
    texts = [
        "[CLS] who? [SEP] x[MASK]y [UNK][PAD] [cls]",
        "[SEP]",
        "caf\u00e9 [SEP] [MASK]\u00a0[PAD]",
    ]
    texts += [
        "".join(rng.choices(TRICKY + specials * 4, k=rng.randint(0, 20))) for _ in range(1000)
    ]
    expected = reference_ids(full, texts)
    assert split.tokenize(texts).to_list() == expected
    assert split.tokenize_with_offsets(texts)[0].to_list() == expected
    assert split.tokenize_words(texts).row_lengths().numpy().tolist() == [
        len(full.basic_tokenizer.tokenize(text)) for text in texts
    ]
    assert ours.tokenize(["[SEP]"]).to_list() == [[ours.vocab.sep_id]]  # kept whole by default


def test_offsets_point_into_the_original_text(tokenizer, wiki_lines):
    rng = random.Random(1)
    texts = [line for line in wiki_lines if not line.isascii()][:800]
    texts += ["".join(rng.choices(TRICKY, k=20)) for _ in range(300)] + ["Ça\u00a0va, cafe\u0301!"]
    ids, starts, ends = tokenizer.tokenize_with_offsets(texts, unit="UTF8_CHAR")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(texts)
    basic = reference.BasicTokenizer(do_lower_case=True)
    for text, *rows in zip(
        texts,
        ids.to_list(),
        starts.to_list(),
        ends.to_list(),
        byte_starts.to_list(),
        byte_ends.to_list(),
    ):
        encoded = text.encode("utf-8")
        for token_id, start, end, byte_start, byte_end in zip(*rows):
            assert (
                0 <= start < end <= len(text)
                and text[start:end] == encoded[byte_start:byte_end].decode()
            )
            if token_id != tokenizer.vocab.unk_id:  # the piece comes from those characters
                piece = tokenizer.vocab.tokens[token_id].removeprefix("##").replace("ς", "σ")
                # out of context
                source = "".join(basic.tokenize(text[start:end])).replace("ς", "σ")
                assert piece in source, (text, start, end, piece)
        assert rows[1] == sorted(rows[1])
    last = tokenizer.tokenize_with_offsets(["Ça\u00a0va, cafe\u0301!"], unit="UTF8_CHAR")
    assert [texts[-1][s:e] for s, e in zip(last[1][0].numpy(), last[2][0].numpy())] == [
        "Ça",
        "va",
        ",",
        "cafe\u0301",
        "!",
    ]


def test_works_in_tf_data_tf_function_and_saved_model(tokenizer, wiki_lines, tmp_path):
    lines = wiki_lines[:300]
    expected = tokenizer.tokenize_with_offsets(lines)
    batches = (
        tf.data.Dataset.from_tensor_slices(lines).batch(64).map(tokenizer.tokenize_with_offsets)
    )
    for got, want in zip(zip(*batches), expected):
        assert tf.concat(list(got), 0).to_list() == want.to_list()

    module = tf.Module()
    module.tokenizer = tokenizer
    module.tokenize = tf.function(
        lambda texts: tokenizer.pack_inputs([tokenizer.tokenize(texts)], 32),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    # with the tf.cond branches
    graph = module.tokenize.get_concrete_function().graph.as_graph_def()
    graph_ops = {n.op for n in graph.node} | {
        n.op for f in graph.library.function for n in f.node_def
    }
    assert {"FastWordpieceTokenizeWithOffsets", "RegexSplitWithOffsets"} <= graph_ops
    single = tf.data.Dataset.from_tensor_slices(lines[:3]).map(tokenizer.tokenize)
    assert [ids.numpy().tolist() for ids in single] == expected[0][:3].to_list()
    tf.saved_model.save(module, str(tmp_path / "tokenizer"))
    reloaded = tf.saved_model.load(str(tmp_path / "tokenizer"))
    packed = reloaded.tokenize(tf.constant(lines))
    assert (
        packed["input_word_ids"].numpy().tolist()
        == tokenizer.pack_inputs([expected[0]], 32)["input_word_ids"].numpy().tolist()
    )


def test_pack_inputs_truncates_round_robin(tokenizer):
    vocab = tokenizer.vocab
    first = tf.ragged.constant([[11, 12, 13, 14, 15, 16], [21]], tf.int32)
    second = tf.ragged.constant([[31, 32, 33], [41, 42]], tf.int32)
    packed = tokenizer.pack_inputs([first, second], 8)
    cls, sep, pad = vocab.cls_id, vocab.sep_id, vocab.pad_id
    assert packed["input_word_ids"].numpy().tolist() == [
        [cls, 11, 12, 13, sep, 31, 32, sep],
        [cls, 21, sep, 41, 42, sep, pad, pad],
    ]
    assert packed["input_type_ids"].numpy().tolist() == [
        [0, 0, 0, 0, 0, 1, 1, 1],
        [0, 0, 0, 1, 1, 1, 0, 0],
    ]
    assert packed["input_mask"].numpy().tolist() == [[1] * 8, [1] * 6 + [0] * 2]
    assert all(t.dtype == tf.int32 for t in packed.values())
    single = tokenizer.pack_inputs(first, 4)["input_word_ids"].numpy().tolist()
    assert single == [[cls, 11, 12, sep], [cls, 21, sep, pad]]
    # Pairs keep the lengths google-research/bert's _truncate_seq_pair keeps.
    for length_a, length_b, seq_length in [(9, 9, 8), (9, 2, 8), (2, 9, 9), (4, 4, 12), (7, 6, 10)]:
        a, b = list(range(length_a)), list(range(length_b))
        while len(a) + len(b) > seq_length - 3:
            (a if len(a) > len(b) else b).pop()
        packed = tokenizer.pack_inputs(
            [tf.ragged.constant([[7] * length_a]), tf.ragged.constant([[8] * length_b])], seq_length
        )["input_word_ids"].numpy()
        assert [(packed == 7).sum(), (packed == 8).sum()] == [len(a), len(b)]
    with pytest.raises(ValueError, match="seq_length=3"):
        tokenizer.pack_inputs([first, second], 3)
    # A tensor seq_length (the exported bert_pack_inputs takes one) is checked when the graph runs.
    pack = tf.function(lambda seq_length: tokenizer.pack_inputs([first, second], seq_length))
    assert pack(tf.constant(4))["input_word_ids"].shape == (2, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_length leaves no room"):
        pack(tf.constant(3))


def test_pack_inputs_equals_tensorflow_text_packing(tokenizer):
    """Random one- and two-segment batches, empty rows included, padded and unpadded:
    tensorflow-text's RoundRobinTrimmer + combine_segments + pad_model_inputs is the reference."""
    vocab, rng = tokenizer.vocab, np.random.default_rng(0)
    for _ in range(40):
        batch, seq_length = int(rng.integers(1, 5)), int(rng.integers(4, 30))
        segments = [
            tf.ragged.constant(
                [rng.integers(1000, 2000, rng.integers(0, 25)).tolist() for _ in range(batch)],
                tf.int32,
                row_splits_dtype=tf.int64,
            )
            for _ in range(rng.integers(1, 3))
        ]
        trimmed = tf_text.RoundRobinTrimmer(seq_length - len(segments) - 1).trim(segments)
        ids, type_ids = tf_text.combine_segments(trimmed, vocab.cls_id, vocab.sep_id)
        width = int(ids.row_lengths().numpy().max())
        for pad_to_seq_length, length in [(True, seq_length), (False, width)]:
            word_ids, mask = tf_text.pad_model_inputs(ids, length, pad_value=vocab.pad_id)
            packed = tokenizer.pack_inputs(
                segments, seq_length, pad_to_seq_length=pad_to_seq_length
            )
            assert packed["input_word_ids"].numpy().tolist() == word_ids.numpy().tolist()
            assert packed["input_mask"].numpy().tolist() == mask.numpy().tolist()
            assert (
                packed["input_type_ids"].numpy().tolist()
                == tf_text.pad_model_inputs(type_ids, length)[0].numpy().tolist()
            )


def test_pack_inputs_of_a_batch_of_no_rows(tokenizer):
    """0 rows pack to `[0, seq_length]`, unpadded to `[CLS] [SEP]`'s width (a pair: one more)."""
    empty = tokenizer.tokenize(tf.constant([], tf.string))
    for segments in ([empty], [empty, empty]):
        for pad_to_seq_length, width in [(True, 8), (False, len(segments) + 1)]:
            packed = tokenizer.pack_inputs(segments, 8, pad_to_seq_length=pad_to_seq_length)
            assert {name: (tuple(t.shape), t.dtype) for name, t in packed.items()} == {
                name: ((0, width), tf.int32)
                for name in ("input_word_ids", "input_mask", "input_type_ids")
            }


def test_detokenize_and_id_conversions(tokenizer):
    ids = tokenizer.tokenize(["Hello, tokenization world"])
    assert tokenizer.detokenize(ids).numpy().tolist() == [b"hello , tokenization world"]
    as_tokens = tokenizer.convert_ids_to_tokens(ids[0].numpy())
    assert "##ization" in as_tokens
    assert tokenizer.convert_tokens_to_ids(as_tokens + ["not-a-token"]) == ids[
        0
    ].numpy().tolist() + [tokenizer.vocab.unk_id]
    assert tokenizer.vocab_size == 30522


def test_a_cased_vocab_with_lower_casing_is_refused(cased_vocab, uncased_vocab_file):
    """Lower-cased text would never reach a cased vocab's capitalised tokens (google-research/bert
    refuses the same mismatch); an uncased vocab lower-cases, a cased one does not."""
    with pytest.raises(
        ValueError,
        match=rf"^{cased_vocab}: a cased vocab \(\d+% of its tokens have capitals\) "
        r"with do_lower_case: .*pass `do_lower_case`=false$",
    ):
        BertTokenizer(cased_vocab)
    BertTokenizer(uncased_vocab_file)
    BertTokenizer(cased_vocab, do_lower_case=False)


def test_an_uncased_vocab_without_lower_casing_is_refused(uncased_vocab_file, tmp_path):
    """Capitalised words would miss an uncased vocab (google-research/bert
    refuses the same mismatch); a vocab without cased letters takes either
    setting, and an uncased vocab that keeps accents (of text lower-cased
    beforehand) takes do_lower_case=False, which leaves its accents in place."""
    with pytest.raises(
        ValueError,
        match=rf"^{uncased_vocab_file}: an uncased vocab \(no capitalised tokens\) "
        r"without do_lower_case: .*pass `do_lower_case`=true$",
    ):
        BertTokenizer(uncased_vocab_file, do_lower_case=False)
    caseless = write_word_vocab(tmp_path / "vocab.txt", ["\u4e2d\u6587 \u6587\u5b57 1 2 3 ."])
    for do_lower_case in (True, False):
        BertTokenizer(caseless, do_lower_case=do_lower_case)
    accented = write_word_vocab(tmp_path / "accented_vocab.txt", ["l'été au café du garçon"])
    tokenizer = BertTokenizer(accented, do_lower_case=False)
    ids = tokenizer.tokenize(["l'été au café"])
    assert tokenizer.convert_ids_to_tokens(ids[0].numpy()) == ["l", "'", "été", "au", "café"]


def test_chinese_vocab_matches_full_tokenizer():
    """bert-base-chinese's vocab (a subset of it, in its order) on
    real Chinese, mixed Chinese-English text, full-width punctuation,
    letters and digits, and the characters BERT's rules change."""
    fixtures = REPO / "tests" / "fixtures" / "chinese"
    vocab = str(fixtures / "vocab.txt")
    texts = (fixtures / "news.txt").read_text(encoding="utf-8").split("\n") + [
        "这家公司推出了基于BERT-base的中文模型，准确率达到９２％。",
        "Ｈｅｌｌｏ　Ｗｏｒｌｄ！２０２４年【测试】《三体》",
        "……——“引号”（括号）１２３４５６７８９０",
        "ＡＢＣ，abc，Abc。",
        "\uf900\u3000中文\u200b模型\tBERT模型",
    ]
    ours = BertTokenizer(vocab, do_lower_case=True)
    full = reference.FullTokenizer(vocab, do_lower_case=True)
    assert ours.tokenize(texts).to_list() == reference_ids(full, texts)
    texts.append("中文[MASK]模型[SEP]")  # the reference splits special tokens in text
    special_split = BertTokenizer(vocab, do_lower_case=True, split_special_tokens=True)
    assert special_split.tokenize(texts).to_list() == reference_ids(full, texts)
