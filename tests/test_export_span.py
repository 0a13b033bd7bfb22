"""BertSpanLabeler export: a quickly trained model answers from a two-window context."""

from types import SimpleNamespace

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import (
    random_encoder_inputs,
    run_without_bert_tf,
    tiny_encoder,
    write_word_vocab,
)
from bert_tf.export import export_task_model
from bert_tf.export.span_export import SpanExport
from bert_tf.metrics.squad_metrics import postprocess
from bert_tf.models import BertSpanLabeler
from bert_tf.tokenization import BertTokenizer

QUESTION = "who built the bridge ?"
# The answer "Ada Lovelace" is in the second half: with SEQ_LENGTH 24 the context needs two windows.
CONTEXT = (
    "The old town sits by a slow river and many small boats pass under its arches every day "
    "while the bridge was built by Ada Lovelace long ago ."
)
ANSWER = "Ada Lovelace"
SEQ_LENGTH, MAX_QUERY, STRIDE = 24, 8, 6


def training_features(tokenizer):
    """Every window of the fixture (and shifted copies) labelled with the answer span, or [CLS]."""
    question = tokenizer.tokenize(QUESTION).numpy().tolist()
    context = tokenizer.tokenize(CONTEXT).numpy().tolist()
    answer = tokenizer.tokenize(ANSWER).numpy().tolist()
    begin = next(i for i in range(len(context)) if context[i : i + len(answer)] == answer)
    ids, starts, ends = [], [], []
    room = SEQ_LENGTH - len(question) - 3
    for offset in range(0, len(context) - 2):
        window = context[offset : offset + room]
        tokens = [
            tokenizer.vocab.cls_id,
            *question,
            tokenizer.vocab.sep_id,
            *window,
            tokenizer.vocab.sep_id,
        ]
        inside = offset <= begin and begin + len(answer) <= offset + len(window)
        first = len(question) + 2 + begin - offset
        starts.append(first if inside else 0)
        ends.append(first + len(answer) - 1 if inside else 0)
        ids.append(tokens + [0] * (SEQ_LENGTH - len(tokens)))
    ids = np.array(ids, "int32")
    type_ids = np.cumsum(ids == tokenizer.vocab.sep_id, axis=1) >= 1
    type_ids = (type_ids & (ids != 0) & (np.arange(SEQ_LENGTH) > len(question) + 1)).astype("int32")
    features = {
        "input_word_ids": ids,
        "input_mask": (ids != 0).astype("int32"),
        "input_type_ids": type_ids,
    }
    return features, {"start_logits": np.array(starts), "end_logits": np.array(ends)}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    directory = tmp_path_factory.mktemp("span")
    tokenizer = BertTokenizer(write_word_vocab(directory / "vocab.txt", [QUESTION, CONTEXT]))
    tf.keras.utils.set_random_seed(0)
    model = BertSpanLabeler(tiny_encoder(vocab_size=tokenizer.vocab_size))
    model.build_with_dummy_inputs()
    features, labels = training_features(tokenizer)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(
        optimizer=tf.keras.optimizers.Adam(1e-3), loss={"start_logits": loss, "end_logits": loss}
    )
    # 60 passes as one Keras epoch: each epoch of `fit` costs a fixed ~0.1 s.
    passes = (
        tf.data.Dataset.from_tensor_slices((features, labels))
        .shuffle(64, seed=0)
        .batch(16)
        .repeat(60)
    )
    model.fit(passes, verbose=0)
    path = export_task_model(
        model,
        directory / "export",
        tokenizer=tokenizer,
        seq_length=SEQ_LENGTH,
        max_query_length=MAX_QUERY,
        doc_stride=STRIDE,
        max_answer_length=5,
    )
    return model, tokenizer, path, tf.saved_model.load(path)


def test_context_needs_two_windows(trained):
    _, tokenizer, _, _ = trained
    room = SEQ_LENGTH - len(tokenizer.tokenize(QUESTION)) - 3
    assert len(tokenizer.tokenize(CONTEXT)) > room


def test_answer_string_and_char_offsets(trained):
    _, _, _, loaded = trained
    out = loaded.signatures["text"](
        question=tf.constant([QUESTION]), context=tf.constant([CONTEXT])
    )
    start, end = int(out["start_char"][0]), int(out["end_char"][0])
    assert out["answer"].numpy()[0].decode() == ANSWER
    assert (start, end) == (CONTEXT.index(ANSWER), CONTEXT.index(ANSWER) + len(ANSWER))
    assert CONTEXT[start:end] == ANSWER


def test_serving_default_equals_the_model(trained):
    model, tokenizer, _, loaded = trained
    inputs = random_encoder_inputs(3, SEQ_LENGTH, tokenizer.vocab_size, seed=2)
    outputs = loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})
    expected = model(inputs)
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(outputs[name], expected[name], atol=1e-5)


def test_text_equals_tokenizer_then_serving_on_one_window(trained):
    model, tokenizer, _, loaded = trained
    question, context = "who built it ?", "Ada built the bridge ."
    out = loaded.signatures["text"](
        question=tf.constant([question]), context=tf.constant([context])
    )
    q = len(tokenizer.tokenize(question)) + 2
    n = len(tokenizer.tokenize(context))
    logits = model(
        tokenizer.pack_inputs(
            [tokenizer.tokenize([question]), tokenizer.tokenize([context])], q + n + 1
        )
    )
    start, end = logits["start_logits"][0].numpy(), logits["end_logits"][0].numpy()
    scores = {
        (i, j): start[i] + end[j] for i in range(q, q + n) for j in range(i, min(i + 5, q + n))
    }
    best = max(scores, key=scores.get)
    np.testing.assert_allclose(out["score"][0], scores[best], atol=1e-5)
    _, starts, ends = tokenizer.tokenize_with_offsets([context], unit="UTF8_CHAR")
    assert (int(out["start_char"][0]), int(out["end_char"][0])) == (
        int(starts[0][best[0] - q]),
        int(ends[0][best[1] - q]),
    )


def test_empty_long_and_batch_64(trained):
    _, _, _, loaded = trained
    questions = ["", QUESTION, "who ?", QUESTION * 10] * 16
    contexts = [CONTEXT, "", CONTEXT * 4, CONTEXT] * 16
    out = loaded.signatures["text"](question=tf.constant(questions), context=tf.constant(contexts))
    assert out["answer"].shape == (64,)
    assert out["answer"][1].numpy() == b""  # an empty context has no answer
    answered = 0
    for i, context in enumerate(contexts):
        answer = out["answer"][i].numpy().decode()
        start, end = int(out["start_char"][i]), int(out["end_char"][i])
        if answer:  # cut from the context at its code point offsets
            assert 0 <= start < end <= len(context) and context[start:end] == answer
            answered += 1
        else:  # no answer: offsets -1, as SpanExport documents
            assert (start, end) == (-1, -1)
    assert answered == 48  # an answer in every non-empty context
    np.testing.assert_array_equal(out["start_char"][4:8], out["start_char"][:4])


def test_batch_of_0(trained):
    _, _, _, loaded = trained
    empty = tf.constant([], tf.string)
    out = loaded.signatures["text"](question=empty, context=empty)
    assert {name: (tuple(t.shape), t.dtype) for name, t in out.items()} == {
        "answer": ((0,), tf.string),
        "score": ((0,), tf.float32),
        "start_char": ((0,), tf.int64),
        "end_char": ((0,), tf.int64),
    }


@pytest.mark.parametrize("questions, contexts", [(2, 1), (1, 3), (3, 1)])
def test_unequal_batches_are_refused(trained, questions, contexts):
    _, _, _, loaded = trained
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="question and context must have the same batch size"
    ):
        loaded.signatures["text"](
            question=tf.constant([QUESTION] * questions), context=tf.constant([CONTEXT] * contexts)
        )


def test_version_2_null_answer(trained):
    model, tokenizer, _, _ = trained
    module = SpanExport(
        model, tokenizer, SEQ_LENGTH, 5, STRIDE, MAX_QUERY, version_2_with_negative=True
    )
    question, context = (
        tf.constant([QUESTION]),
        tf.constant(["the old town sits by a slow river ."]),
    )
    out = module.answer_text(question, context)  # eagerly: the signature's ops, not traced again
    length = len(tokenizer.tokenize(QUESTION)) + len(tokenizer.tokenize(context[0])) + 3
    logits = model(
        tokenizer.pack_inputs([tokenizer.tokenize(question), tokenizer.tokenize(context)], length)
    )
    null = float(logits["start_logits"][0, 0] + logits["end_logits"][0, 0])
    span = SpanExport(model, tokenizer, SEQ_LENGTH, 5, STRIDE, MAX_QUERY).answer_text(
        question, context
    )
    assert (out["answer"].numpy()[0] == b"") == (null > float(span["score"][0]))
    # the model learned [CLS] for contexts without the answer
    assert out["answer"].numpy()[0] == b""


def run_squad_predictions(model, tokenizer, question, context, **options):
    """run_squad.py's post-processing of `model` on a `question` and a one-window `context`,
    packed without padding."""
    q, pieces = len(tokenizer.tokenize(question)) + 2, len(tokenizer.tokenize(context))
    length = q + pieces + 1
    logits = model(
        tokenizer.pack_inputs(
            [tokenizer.tokenize([question]), tokenizer.tokenize([context])], length
        )
    )
    _, starts, ends = tokenizer.tokenize_with_offsets([context], unit="UTF8_CHAR")
    # [windows, seq]
    char_start, char_end = np.full([1, length], -1), np.full([1, length], -1)
    char_start[0, q : q + pieces], char_end[0, q : q + pieces] = starts[0], ends[0]
    features = SimpleNamespace(
        example_index=np.array([0]),
        token_char_start=char_start,
        token_char_end=char_end,
        token_is_max_context=char_start >= 0,
    )
    return postprocess(
        [SimpleNamespace(qas_id="q", context=context)],
        features,
        logits["start_logits"],
        logits["end_logits"],
        max_answer_length=5,
        **options,
    )


def test_n_best_size_limits_the_spans_as_run_squad(trained):
    """run_squad.py pairs only each window's top --n_best_size starts and ends; so does export.

    The export gets the three contexts in one request with a longer one, so they are padded;
    run_squad.py gets each alone, unpadded. Equal answers show that padding takes no top place.
    """
    model, tokenizer, _, _ = trained
    pairs = [
        ("who built it ?", "Ada built the bridge ."),
        ("who ?", "the old town sits by a slow river ."),
        (QUESTION, "many small boats pass under its arches every day ."),
    ]
    padded_by = (QUESTION, CONTEXT)
    answers = {}
    for n_best_size in (1, 2, 3, SEQ_LENGTH):
        module = SpanExport(
            model, tokenizer, SEQ_LENGTH, 5, STRIDE, MAX_QUERY, n_best_size=n_best_size
        )
        # Eagerly, the signature's ops without tracing them four times.
        request = [*pairs, padded_by]
        out = module.answer_text(
            tf.constant([q for q, _ in request]), tf.constant([c for _, c in request])
        )
        answers[n_best_size] = [a.decode() for a in out["answer"].numpy()[: len(pairs)]]
        expected = [
            run_squad_predictions(model, tokenizer, q, c, n_best_size=n_best_size).predictions["q"]
            for q, c in pairs
        ]
        assert answers[n_best_size] == [a if a != "empty" else "" for a in expected], n_best_size
    assert len({tuple(a) for a in answers.values()}) > 1, answers  # the limit mattered


def test_version_2_threshold_decides_as_run_squad(trained, tmp_path):
    """run_squad.py's post-processing answers "" when null score - best span score exceeds
    --null_score_diff_threshold; the export, which stores the threshold, decides the same."""
    model, tokenizer, _, _ = trained
    question, context = "who built it ?", "Ada built the bridge ."  # one window

    def run_squad_answer(threshold):
        return run_squad_predictions(
            model,
            tokenizer,
            question,
            context,
            n_best_size=SEQ_LENGTH,
            version_2_with_negative=True,
            null_score_diff_threshold=threshold,
        )

    odds = run_squad_answer(0.0).null_odds["q"]  # null score - best span score
    answers = []
    for i, threshold in enumerate((odds - 0.5, odds + 0.5)):
        path = export_task_model(
            model,
            tmp_path / str(i),
            tokenizer=tokenizer,
            seq_length=SEQ_LENGTH,
            max_query_length=MAX_QUERY,
            doc_stride=STRIDE,
            max_answer_length=5,
            version_2_with_negative=True,
            null_score_diff_threshold=threshold,
        )
        loaded = tf.saved_model.load(path)
        assert float(loaded.null_score_diff_threshold) == pytest.approx(threshold)
        out = loaded.signatures["text"](
            question=tf.constant([question]), context=tf.constant([context])
        )
        answers.append(out["answer"].numpy()[0].decode())
        assert answers[-1] == run_squad_answer(threshold).predictions["q"]
    assert answers[0] == "" and answers[1]  # the threshold decides


@pytest.mark.parametrize(
    "options, message",
    [
        (
            dict(max_query_length=21),
            r"^`max_query_length`=21 leaves no room for the context in "
            r"`max_seq_length`=24$",
        ),
        (
            dict(doc_stride=0, max_query_length=MAX_QUERY),
            r"^`doc_stride`=0, `max_answer_length`=30 and `n_best_size`=20 must be positive$",
        ),
    ],
)
def test_bad_window_options_are_one_line_value_errors(trained, options, message):
    model, tokenizer, _, _ = trained
    with pytest.raises(ValueError, match=message):
        SpanExport(model, tokenizer, SEQ_LENGTH, **options)


def test_fresh_process_without_bert_tf(trained, tmp_path):
    _, _, path, _ = trained
    stdout = run_without_bert_tf(
        f"""
        import json
        loaded = tf.saved_model.load({str(path)!r})
        ones = tf.ones([1, 8], tf.int32)
        print(loaded.signatures["serving_default"](input_word_ids=ones, input_mask=ones,
                                                   input_type_ids=0 * ones)["start_logits"].shape)
        print(loaded.signatures["text"](question=tf.constant([{QUESTION!r}]),
                                        context=tf.constant([{CONTEXT!r}]))["answer"].numpy()[0].decode())
    """,
        tmp_path,
    )
    assert stdout.strip().splitlines()[-2:] == ["(1, 8)", ANSWER]
