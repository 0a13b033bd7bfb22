"""run_squad.py end to end: a tiny BERT learns SQuAD through windows; v2 output files; bad data."""

import json
import logging
import os
import pathlib
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import REPO, run_script, script_failures, write_tiny_config, write_word_vocab
from bert_tf.data.squad import SquadDataError, read_squad_examples
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.metrics import squad_metrics
from bert_tf.tasks.question_answering import SquadTask
from bert_tf.tokenization import BertTokenizer

FIXTURES = REPO / "tests" / "fixtures" / "squad"
# 64 tokens a window and a stride of 16: the longer contexts take two or three windows.
WINDOWS = ["--max_seq_length=64", "--doc_stride=16", "--max_query_length=16"]


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """A vocab covering the fixtures and a tiny config: (vocab, bert_config.json)."""
    directory = tmp_path_factory.mktemp("model")
    examples = read_squad_examples(str(FIXTURES / "train-v2.0.json"), version_2_with_negative=True)
    texts = [e.context for e in examples] + [e.question for e in examples]
    vocab = write_word_vocab(directory / "vocab.txt", texts)
    vocab_size = len(pathlib.Path(vocab).read_text(encoding="utf-8").splitlines())
    return vocab, write_tiny_config(directory, vocab_size=vocab_size)


def test_learns_squad_v1_through_windows(tmp_path, model_files):
    """As google-research/bert's README runs it: --train_file and --predict_file, no --data_dir."""
    vocab, config = model_files
    train = FIXTURES / "train-v1.1.json"
    out = tmp_path / "out"
    result = run_script(
        "run_squad.py",
        f"--train_file={train}",
        f"--predict_file={train}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={out}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        *WINDOWS,
        "--train_batch_size=2",
        "--learning_rate=2e-3",
        "--num_train_epochs=6",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Fine-tuning on 32 windows from 16 examples" in result.stdout

    examples = read_squad_examples(str(train))
    predictions = json.loads((out / "predictions.json").read_text(encoding="utf-8"))
    assert set(predictions) == {e.qas_id for e in examples}
    assert all(predictions[e.qas_id] in e.context for e in examples)  # slices of the original text
    scores = squad_metrics.evaluate(examples, predictions)
    eval_results = dict(
        line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()
    )
    assert float(eval_results["f1"]) == pytest.approx(scores["f1"])
    # A trivial reader (each context's first three words)
    # scores near zero; the model learned the fixture.
    baseline = squad_metrics.evaluate(
        examples, {e.qas_id: " ".join(e.context.split()[:3]) for e in examples}
    )
    assert baseline["f1"] < 10
    assert scores["f1"] > 50 and scores["exact_match"] > 35, scores

    nbest = json.loads((out / "nbest_predictions.json").read_text(encoding="utf-8"))
    for example in examples:
        entries = nbest[example.qas_id]
        assert entries[0]["text"] == predictions[example.qas_id] and len(entries) <= 20
        assert sum(e["probability"] for e in entries) == pytest.approx(1.0)
    assert not (out / "null_odds.json").exists()


def test_squad_v2_writes_null_odds_and_official_scores(tmp_path, model_files, monkeypatch):
    vocab, config = model_files
    calls = []  # squad_metrics.postprocess, counted
    postprocess = squad_metrics.postprocess
    monkeypatch.setattr(
        squad_metrics, "postprocess", lambda *args: calls.append(1) or postprocess(*args)
    )
    shutil.copy(FIXTURES / "train-v2.0.json", tmp_path / "train-v2.0.json")
    shutil.copy(FIXTURES / "train-v2.0.json", tmp_path / "dev-v2.0.json")  # the default file names
    # one short epoch: the files matter
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=str(tmp_path / "out"),
        do_train=True,
        do_eval=True,
        do_predict=True,
        max_seq_length=64,
        train_batch_size=8,
        num_train_epochs=1,
        verbose=0,
        export_dir=str(tmp_path / "export"),
    )
    task = SquadTask(
        options,
        BertTokenizer(vocab),
        version_2_with_negative=True,
        doc_stride=16,
        max_query_length=16,
        null_score_diff_threshold=0.5,
    )
    results = run_finetuning(task, options)
    assert len(calls) == 2  # after the epoch, and for eval_results (the predictions files reuse it)

    out = tmp_path / "out"
    examples = read_squad_examples(str(tmp_path / "dev-v2.0.json"), version_2_with_negative=True)
    predictions = json.loads((out / "predictions.json").read_text(encoding="utf-8"))
    null_odds = json.loads((out / "null_odds.json").read_text(encoding="utf-8"))
    assert set(predictions) == set(null_odds) == {e.qas_id for e in examples}
    for qas_id, odds in null_odds.items():
        assert (predictions[qas_id] == "") == (odds > 0.5)
    nbest = json.loads((out / "nbest_predictions.json").read_text(encoding="utf-8"))
    assert all(any(entry["text"] == "" for entry in entries) for entries in nbest.values())
    # The driver's metrics are the official v2.0 script's on the files written.
    scores = squad_metrics.evaluate(examples, predictions, null_odds, version_2_with_negative=True)
    assert results == pytest.approx(scores)
    assert {"HasAns_f1", "NoAns_f1", "best_f1", "best_f1_thresh"} <= set(results)
    assert np.isfinite(list(null_odds.values())).all()
    # The export answers "" by the run's threshold too.
    assert float(tf.saved_model.load(str(tmp_path / "export")).null_score_diff_threshold) == 0.5


def test_a_training_set_smaller_than_a_batch_is_counted_in_windows(tmp_path, model_files):
    vocab, config = model_files
    options = FineTuningOptions(
        data_dir=str(FIXTURES),
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=str(tmp_path / "out"),
        do_train=True,
        max_seq_length=64,
        train_batch_size=1000,
    )
    task = SquadTask(options, BertTokenizer(vocab), doc_stride=16, max_query_length=16)
    with pytest.raises(
        ValueError,
        match=r"^the training set has 32 windows from 16 examples, fewer than "
        r"`train_batch_size`=1000$",
    ):
        run_finetuning(task, options)


def test_predict_file_may_leave_out_answers_unless_evaluated(tmp_path, model_files):
    vocab, config = model_files
    data = json.loads((FIXTURES / "train-v1.1.json").read_text(encoding="utf-8"))
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                del qa["answers"]
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(data), encoding="utf-8")

    def task(**flags):
        options = FineTuningOptions(
            data_dir=str(tmp_path),
            vocab_file=vocab,
            bert_config_file=config,
            output_dir=str(tmp_path / "out"),
            max_seq_length=64,
            **flags,
        )
        return SquadTask(
            options,
            BertTokenizer(vocab),
            predict_file=str(questions),
            doc_stride=16,
            max_query_length=16,
        )

    examples, features = task(do_predict=True).encode("dev").metadata
    assert len(examples) == 16 and all(e.answers == () for e in examples)
    assert len(features) == 32 and not features.start_positions.any()  # 16 questions in 32 windows
    with pytest.raises(
        SquadDataError,
        match=r"question 1\.1-00: missing field 'answers' \(training and `do_eval` "
        r"need the gold answers\)$",
    ):
        task(do_eval=True, do_predict=True).encode("dev")


def test_answer_start_is_checked_in_the_training_file_only(tmp_path, model_files, caplog):
    """The dev file is only scored, on the answer texts (as the official evaluators): its answers
    are kept as they are; in the training file an answer that differs from the context by a doubled
    space becomes the context's slice, which --verbose_logging logs."""
    vocab, config = model_files
    data = json.loads((FIXTURES / "train-v1.1.json").read_text(encoding="utf-8"))
    answer = data["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]
    answer["text"] = answer["text"].replace(" ", "  ")
    squad_file = tmp_path / "squad.json"
    squad_file.write_text(json.dumps(data), encoding="utf-8")
    options = FineTuningOptions(
        data_dir=None,
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=str(tmp_path / "out"),
        max_seq_length=64,
        do_train=True,
        do_eval=True,
    )
    for verbose_logging in (False, True):
        task = SquadTask(
            options,
            BertTokenizer(vocab),
            train_file=str(squad_file),
            predict_file=str(squad_file),
            doc_stride=16,
            max_query_length=16,
            verbose_logging=verbose_logging,
        )
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="absl"):
            examples, _ = task.encode("dev").metadata
            assert examples[0].answers == ((answer["text"], answer["answer_start"]),)
            examples, _ = task.encode("train").metadata
        assert examples[0].answers == (("Marguerite Oléron", 108),)
        assert (
            caplog.messages
            == [
                f"{squad_file}: question 1.1-00: answer 'Marguerite  Oléron' at answer_start 108 "
                "is taken as the context's 'Marguerite Oléron' at 108"
            ]
            * verbose_logging
        )


class CannedPredictions(SquadTask):
    """SquadTask whose post-processing answers 1.1-00 "new", its one candidate `nbest_text`."""

    nbest_text = "new"

    def _postprocess(self, encoded, outputs):
        return squad_metrics.SquadPredictions(
            {"1.1-00": "new"}, {"1.1-00": [{"text": self.nbest_text}]}, {}
        )


class UnwritableNbest(CannedPredictions):
    """Its n-best text cannot be written (a lone surrogate, which UTF-8 refuses), as a run killed
    while writing nbest_predictions.json."""

    nbest_text = "\ud800"


def test_prediction_files_are_replaced_together(tmp_path, model_files):
    """A run that fails while writing nbest_predictions.json leaves a reused output_dir's older
    predictions.json, which pairs with the older n-best list, and no temporaries."""
    vocab, config = model_files
    options = FineTuningOptions(
        data_dir=str(FIXTURES), vocab_file=vocab, output_dir=str(tmp_path), do_predict=True
    )
    older = {
        "predictions.json": '{"1.1-00": "old"}\n',
        "nbest_predictions.json": '{"1.1-00": []}\n',
    }
    for name, text in older.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        UnwritableNbest(options, BertTokenizer(vocab)).write_predictions(
            "dev", None, None, str(tmp_path)
        )
    assert {
        name: (tmp_path / name).read_text(encoding="utf-8") for name in os.listdir(tmp_path)
    } == older


def test_squad_v1_predictions_remove_the_null_odds_of_an_older_v2_run(tmp_path, model_files):
    vocab, _ = model_files
    options = FineTuningOptions(
        data_dir=str(FIXTURES), vocab_file=vocab, output_dir=str(tmp_path), do_predict=True
    )
    (tmp_path / "null_odds.json").write_text('{"1.1-00": 0.4}\n', encoding="utf-8")
    CannedPredictions(options, BertTokenizer(vocab)).write_predictions(
        "dev", None, None, str(tmp_path)
    )
    assert sorted(os.listdir(tmp_path)) == ["nbest_predictions.json", "predictions.json"]


def test_squad_task_refuses_answer_settings_that_are_not_positive(tmp_path, model_files):
    """SquadTask built without flags (FineTuningOptions) checks what absl checks for the script."""
    vocab, _ = model_files
    options = FineTuningOptions(
        data_dir=str(FIXTURES), vocab_file=vocab, output_dir=str(tmp_path / "out")
    )
    with pytest.raises(ValueError, match=r"^`max_answer_length` must be positive, got -1$"):
        SquadTask(options, BertTokenizer(vocab), max_answer_length=-1)


def test_bad_data_and_missing_flags_are_one_line_errors(tmp_path, model_files):
    """A training answer not found at its answer_start, and --data_dir left out where a file is
    unnamed: each refused before anything is written."""
    vocab, config = model_files
    data = json.loads((FIXTURES / "train-v1.1.json").read_text(encoding="utf-8"))
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"][0]["answer_start"] = 3
    bad = tmp_path / "train-v1.1.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    model = [
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={tmp_path / 'out'}",
        *WINDOWS,
    ]
    cases = [
        (
            [f"--data_dir={tmp_path}", "--do_train", *model],
            f"{bad}: no question has its answer in the context "
            "at its answer_start, e.g. question 1.1-00: "
            "answer_start 3 gives ' Vell Lighthouse ', not the answer text 'Marguerite Oléron'",
        ),
        (
            ["--do_train", f"--predict_file={FIXTURES / 'train-v1.1.json'}", *model],
            "--data_dir is required without --train_file",
        ),
        (
            ["--do_predict", f"--train_file={FIXTURES / 'train-v1.1.json'}", *model],
            "--data_dir is required without --predict_file",
        ),
    ]
    assert script_failures("run_squad.py", *(argv for argv, _ in cases)) == [
        (1, f"run_squad.py: error: {message}") for _, message in cases
    ]
    assert not (tmp_path / "out").exists()


def test_task_name_is_no_flag_of_squad():
    """--task_name picks run_classifier.py's task; run_squad.py refuses it, not ignores it."""
    result = run_script("run_squad.py", "--task_name=MRPC")
    assert result.returncode == 1
    assert "Unknown command line flag 'task_name'" in result.stderr


def test_cmrc2018_reads_chinese_character_offsets_and_scores_with_its_metric(tmp_path):
    """CMRC 2018 from --data_dir: gold spans of unsegmented Chinese land on their characters, and
    the task scores them with CMRC's metric (SQuAD's
    whitespace-word F1 would score a near miss 0)."""
    chinese = REPO / "tests" / "fixtures" / "chinese"
    shutil.copy(chinese / "cmrc2018_dev.json", tmp_path / "cmrc2018_dev.json")
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=str(chinese / "vocab.txt"),
        output_dir=str(tmp_path / "out"),
        max_seq_length=48,
        do_eval=True,
    )
    task = SquadTask(
        options,
        BertTokenizer(options.vocab_file),
        task="cmrc2018",
        doc_stride=16,
        max_query_length=16,
    )
    encoded = task.encode("dev")
    examples, features = encoded.metadata
    assert len(features.example_index) > len(examples)  # contexts longer than a window
    seq = features.start_positions.shape[0], options.max_seq_length
    oracle = {
        "start_logits": np.eye(seq[1])[features.start_positions] * 10,
        "end_logits": np.eye(seq[1])[features.end_positions] * 10,
    }
    predictions = task._postprocess(encoded, oracle).predictions
    assert predictions["CMRC_DEV_1"] == "明年年底" and predictions["CMRC_DEV_4"] == "９２％"
    assert task.evaluate("dev", encoded, oracle) == {"exact_match": 100.0, "f1": 100.0}
    near_miss = {
        **oracle,
        "end_logits": np.eye(seq[1])[
            np.maximum(features.end_positions - 1, features.start_positions)
        ]
        * 10,
    }
    scores = task.evaluate("dev", encoded, near_miss)
    assert 50 < scores["f1"] < 100 and scores["exact_match"] < 100


def test_cmrc2018_has_no_unanswerable_questions(tmp_path):
    options = FineTuningOptions(
        data_dir=str(tmp_path),
        vocab_file=str(REPO / "tests/fixtures/chinese/vocab.txt"),
        output_dir=str(tmp_path / "out"),
    )
    with pytest.raises(ValueError, match="`task`=cmrc2018 has no unanswerable questions"):
        SquadTask(
            options,
            BertTokenizer(options.vocab_file),
            task="cmrc2018",
            version_2_with_negative=True,
        )
