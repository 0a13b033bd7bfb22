"""export_task_model on a BertTokenClassifier (per-word labels) and a BertMultipleChoice."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import random_encoder_inputs, tiny_encoder, write_word_vocab
from bert_tf.export import export_task_model
from bert_tf.export.multiple_choice_export import MultipleChoiceExport
from bert_tf.models import BertMultipleChoice, BertTokenClassifier
from bert_tf.tokenization import BertTokenizer

TEXTS = ["John lives in Paris", "unbelievably , Zoë léft", ""]
# Past SEQ_LENGTH - 2 = 10 tokens: a word of 12 pieces
# cut after 2; a word ending on the last token kept.
LONG_TEXTS = ["John " * 8 + "unbelievably", "John " * 9 + "lives in"]
LABELS = ["O", "B-PER", "B-LOC"]
SEQ_LENGTH = 12


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    # Only characters for "unbelievably": it becomes a word of many ## pieces.
    return BertTokenizer(
        write_word_vocab(
            tmp_path_factory.mktemp("vocab") / "vocab.txt",
            ["john lives in paris , zoë léft", "abcdefghijklmnopqrstuvwxyz", "-."],
        )
    )


@pytest.fixture(scope="module")
def tagger(tokenizer, tmp_path_factory):
    # Seeded, and initialised wide so a token's top two logits differ by far more than float noise:
    # at 0.02 they can be ~2e-6 apart (under 1e-5 in 0.7% of seeds) and the exported labels could
    # differ from the model's argmax; at 0.5 at least 1e-3 over 60 seeds.
    keras.utils.set_random_seed(1)
    model = BertTokenClassifier(
        tiny_encoder(vocab_size=tokenizer.vocab_size, initializer_range=0.5), num_classes=3
    )
    model.build_with_dummy_inputs()
    path = export_task_model(
        model,
        tmp_path_factory.mktemp("tagger") / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
        labels=LABELS,
    )
    return model, tf.saved_model.load(path)


def test_tagger_serving_default_equals_the_model(tagger, tokenizer):
    model, loaded = tagger
    inputs = random_encoder_inputs(4, SEQ_LENGTH, tokenizer.vocab_size, seed=1)
    got = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    logits = model(inputs)["logits"].numpy()
    np.testing.assert_allclose(got["logits"], logits, atol=1e-5)
    np.testing.assert_array_equal(got["predictions"], logits.argmax(-1))


def test_tagger_text_gives_words_with_their_first_piece_label(tagger, tokenizer):
    model, loaded = tagger
    texts = TEXTS + LONG_TEXTS + ["John-Paris lives in Paris."]
    out = loaded.signatures["text"](text=tf.constant(texts))
    ids, starts, ends = tokenizer.tokenize_with_offsets(texts, unit="UTF8_CHAR")
    kept = ids[:, : SEQ_LENGTH - 2]
    predictions = (
        model(tokenizer.pack_inputs([kept], int(tf.reduce_max(kept.row_lengths())) + 2))["logits"]
        .numpy()
        .argmax(-1)
    )
    for row, text in enumerate(texts):
        tokens = tokenizer.convert_ids_to_tokens(ids[row].numpy())
        # Words are whitespace-separated, as CoNLL's: the tokens after a gap start one.
        firsts = [i for i in range(len(tokens)) if i == 0 or starts[row][i] > ends[row][i - 1]]
        lasts = [i - 1 for i in firsts[1:]] + [len(tokens) - 1]
        # words with all their pieces kept
        firsts = [i for i, j in zip(firsts, lasts) if j < SEQ_LENGTH - 2]
        words = [text[starts[row][i] : ends[row][j]] for i, j in zip(firsts, lasts)]
        n = len(words)
        assert [w.decode() for w in out["tokens"][row].numpy()[:n]] == words
        assert [x.decode() for x in out["labels"][row].numpy()[:n]] == [
            LABELS[predictions[row, i + 1]] for i in firsts
        ]
        assert [
            text[s:e] for s, e in zip(out["start_char"][row][:n], out["end_char"][row][:n])
        ] == words
        assert set(out["tokens"][row].numpy()[n:]) <= {b""} and set(
            out["start_char"][row].numpy()[n:]
        ) <= {-1}
    assert out["tokens"][0].numpy()[:4].tolist() == [b"John", b"lives", b"in", b"Paris"]
    # long input: words past it are dropped
    assert len(tokenizer.tokenize(TEXTS[1])) > SEQ_LENGTH - 2
    # A word cut at the window's end is dropped, not reported as its first pieces.
    assert out["tokens"][1].numpy().tolist() == [b""] * out["tokens"].shape[1]
    assert out["tokens"][3].numpy().tolist() == [b"John"] * 8 + [b""] * 2
    assert out["end_char"][3].numpy().tolist() == [4 + 5 * i for i in range(8)] + [-1] * 2
    assert out["tokens"][4].numpy().tolist() == [b"John"] * 9 + [b"lives"]
    assert out["tokens"][5].numpy()[:4].tolist() == [b"John-Paris", b"lives", b"in", b"Paris."]


def test_tagger_batches_of_1_and_64(tagger):
    _, loaded = tagger
    one = loaded.signatures["text"](text=tf.constant([TEXTS[0]]))
    many = loaded.signatures["text"](text=tf.constant([TEXTS[0]] * 64))
    assert many["labels"].shape == (64, 4)
    np.testing.assert_array_equal(many["labels"][63], one["labels"][0])


def test_tagger_batch_of_0(tagger):
    _, loaded = tagger
    out = loaded.signatures["text"](text=tf.constant([], tf.string))
    assert {name: (tuple(t.shape), t.dtype) for name, t in out.items()} == {
        "tokens": ((0, 0), tf.string),
        "labels": ((0, 0), tf.string),
        "start_char": ((0, 0), tf.int64),
        "end_char": ((0, 0), tf.int64),
    }


def test_tagger_labels_unlike_the_classes_are_a_one_line_value_error(tagger, tokenizer, tmp_path):
    model, _ = tagger
    with pytest.raises(ValueError, match=r"^`labels`: 4 given for a tagger with 3 classes$"):
        export_task_model(
            model, tmp_path, tokenizer=tokenizer, seq_length=SEQ_LENGTH, labels=[*LABELS, "X"]
        )


@pytest.fixture(scope="module")
def chooser(tokenizer):
    # Seeded, and initialised wide so the untrained choices' logits differ by far more than float
    # noise: at 0.02 the top two are a median 5e-5 apart (under 1e-5 in 12% of seeds), and the
    # exported label could differ from the model's argmax; at 0.5 at least 0.06 over 60 seeds.
    keras.utils.set_random_seed(2)
    model = BertMultipleChoice(tiny_encoder(vocab_size=tokenizer.vocab_size, initializer_range=0.5))
    model.build_with_dummy_inputs()
    return model, MultipleChoiceExport(model, tokenizer, SEQ_LENGTH).signatures()


def test_multiple_choice_ids_and_text(chooser, tokenizer):
    model, signatures = chooser
    inputs = {
        k: v.reshape(2, 3, SEQ_LENGTH)
        for k, v in random_encoder_inputs(6, SEQ_LENGTH, tokenizer.vocab_size, seed=4).items()
    }
    got = signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(got["logits"], model(inputs)["logits"], atol=1e-5)

    context, choices = ["john lives in paris"], [["in paris", "zoë", ""]]
    out = signatures["text"](text_a=tf.constant(context), choices=tf.constant(choices))
    packed = tokenizer.pack_inputs(
        [tokenizer.tokenize(context * 3), tokenizer.tokenize(choices[0])], SEQ_LENGTH
    )
    logits = model({k: tf.reshape(v, [1, 3, -1]) for k, v in packed.items()})["logits"]
    np.testing.assert_allclose(out["probabilities"], tf.nn.softmax(logits), atol=1e-5)
    assert int(out["label"][0]) == int(tf.argmax(logits[0]))


@pytest.mark.parametrize("choices", [2, 4, 0])
def test_multiple_choice_batch_of_0(chooser, choices):
    _, signatures = chooser
    out = signatures["text"](
        text_a=tf.constant([], tf.string), choices=tf.zeros([0, choices], tf.string)
    )
    assert out["probabilities"].shape == (0, choices) and out["probabilities"].dtype == tf.float32
    assert out["label"].shape == (0,) and out["label"].dtype == tf.int32


def test_multiple_choice_without_choices_is_refused(chooser):
    _, signatures = chooser
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="choices must hold at least one choice per example"
    ):
        signatures["text"](text_a=tf.constant(["john"]), choices=tf.zeros([1, 0], tf.string))


@pytest.mark.parametrize("contexts, choices", [(1, (2, 1)), (3, (1, 1)), (2, (1, 2))])
def test_multiple_choice_of_unequal_batches_is_refused(chooser, contexts, choices):
    _, signatures = chooser
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="text_a and choices must have the same batch size"
    ):
        signatures["text"](
            text_a=tf.constant(["john"] * contexts), choices=tf.fill(choices, "paris")
        )


def test_tagger_text_labels_each_chinese_character_of_unsegmented_text(tagger, tokenizer):
    """Chinese needs no spaces: each CJK character is a word (as in one-character-a-line NER files),
    with its own label and character offsets; other
    words still end at whitespace or a CJK character."""
    model, loaded = tagger
    text = "南京市BERT模型"
    out = loaded.signatures["text"](text=tf.constant([text]))
    words = ["南", "京", "市", "BERT", "模", "型"]
    assert [w.decode() for w in out["tokens"][0].numpy()] == words
    starts = [0, 1, 2, 3, 7, 8]
    assert out["start_char"][0].numpy().tolist() == starts
    assert out["end_char"][0].numpy().tolist() == [s + len(w) for s, w in zip(starts, words)]
    ids, token_starts, _ = tokenizer.tokenize_with_offsets([text], unit="UTF8_CHAR")
    predictions = model(tokenizer.pack_inputs([ids], SEQ_LENGTH))["logits"].numpy().argmax(-1)[0]
    first_tokens = [token_starts[0].numpy().tolist().index(s) for s in starts]
    assert [x.decode() for x in out["labels"][0].numpy()] == [
        LABELS[predictions[i + 1]] for i in first_tokens
    ]
