"""Whole-word masking of Chinese: words from a segmenter, `##`
pieces elsewhere, the same records for any number of workers."""

import numpy as np
import pytest
import tensorflow as tf

from bert_test_utils import REPO, run_script, script_failures, write_tiny_config
from bert_tf.data import pretraining_data_generator as generator
from bert_tf.data import pretraining_features
from bert_tf.data.dynamic_masking import dynamic_masking_dataset
from bert_tf.data.word_segmentation import SegmenterError, WordGrouper, segmenter
from bert_tf.pretraining.driver import PretrainingOptions, run_pretraining
from bert_tf.tokenization import BertTokenizer

FIXTURES = REPO / "tests" / "fixtures" / "chinese"
# VOCAB: a subset of bert-base-chinese's
NEWS, VOCAB = FIXTURES / "news.txt", str(FIXTURES / "vocab.txt")
SEQ, PREDICTIONS = 64, 10


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(VOCAB, do_lower_case=True, split_special_tokens=True)


def grouped(tokenizer, lines, word_segmenter):
    """The lines' tokens, a space before each that starts a word."""
    ids = tokenizer.tokenize(lines).flat_values.numpy()
    continues = WordGrouper(tokenizer.vocab.tokens, True, word_segmenter).continues(lines, ids)
    return "".join(
        ("" if c else " ") + t for t, c in zip(tokenizer.convert_ids_to_tokens(ids), continues)
    )


@pytest.mark.parametrize("word_segmenter", ["rjieba", "jieba"])
def test_segmented_chinese_words_and_english_word_pieces(tokenizer, word_segmenter):
    lines = ["南京市今天发布了新的公共交通计划。", "基于BERT模型的系统，准确率达到了９２％！"]
    assert grouped(tokenizer, lines, word_segmenter) == (
        " 南京市 今天 发布 了 新 的 公共交通 计划 。"
        " 基于 be##rt 模型 的 系统 ， 准确率 达到 了 ９##２ ％ ！"
    )


def test_without_a_segmenter_only_word_pieces_group(tokenizer):
    assert grouped(tokenizer, ["基于BERT模型"], "none") == " 基 于 be##rt 模 型"


def test_characters_outside_the_vocab_and_line_ends_break_words(tokenizer):
    # 龘 and 好 are not in the fixture vocab: [UNK], each
    # a word; 市民 still groups, and no word spans lines.
    assert grouped(tokenizer, ["龘市民说“好”", "计划", "计划"], "rjieba") == (
        " [UNK] 市民 说 [UNK] [UNK] [UNK] 计划 计划"
    )


def test_unknown_segmenter():
    with pytest.raises(SegmenterError, match="unknown word segmenter 'ltp'"):
        segmenter("ltp")


def create(tmp_path, name, **options):
    path = tmp_path / f"{name}.tfrecord"
    stats = generator.create_pretraining_data(
        [str(NEWS)],
        [str(path)],
        generator.PretrainingDataOptions(
            vocab_file=VOCAB,
            max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS,
            dupe_factor=5,
            **options,
        ),
        progress=False,
    )
    return path, stats


def test_whole_words_masked_together_and_reported(tmp_path):
    path, stats = create(tmp_path, "wwm", do_whole_word_mask=True, word_segmenter="rjieba")
    _, per_char = create(tmp_path, "chars")
    assert stats.mean_masked_word_chars > 1.4 and per_char.mean_masked_word_chars < 1.1
    assert "mean masked word" in stats.summary()
    features = next(
        iter(
            tf.data.TFRecordDataset(str(path))
            .batch(1000)
            .map(lambda s: pretraining_features.parse_examples(s, SEQ, PREDICTIONS))
        )
    )
    weights = features["masked_lm_weights"].numpy() > 0
    assert abs(weights.sum() / features["input_mask"].numpy().sum() - 0.15) < 0.03
    # A word is masked with one draw: adjacent predictions
    # are [MASK] together more often than apart.
    positions = features["masked_lm_positions"].numpy()
    at = (
        np.take_along_axis(features["input_ids"].numpy(), positions, 1)
        == BertTokenizer(VOCAB).vocab.mask_id
    )
    adjacent = weights[:, 1:] & weights[:, :-1] & (positions[:, 1:] == positions[:, :-1] + 1)
    assert np.mean(at[:, 1:][adjacent] == at[:, :-1][adjacent]) > 0.9


def test_records_identical_for_any_num_workers(tmp_path):
    """Two worker processes (the script) write what this process alone writes."""
    out = tmp_path / "two_workers.tfrecord"
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={NEWS}",
        f"--output_file={out}",
        f"--vocab_file={VOCAB}",
        "--do_whole_word_mask",
        "--word_segmenter=rjieba",
        f"--max_seq_length={SEQ}",
        f"--max_predictions_per_seq={PREDICTIONS}",
        "--dupe_factor=2",
        "--chunk_mb=0.0005",
        "--num_workers=2",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "mean masked word" in result.stdout
    path = tmp_path / "one_worker.tfrecord"
    generator.create_pretraining_data(
        [str(NEWS)],
        [str(path)],
        generator.PretrainingDataOptions(
            vocab_file=VOCAB,
            do_whole_word_mask=True,
            word_segmenter="rjieba",
            max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS,
            dupe_factor=2,
        ),
        num_workers=1,
        chunk_bytes=524,
        progress=False,
    )
    assert path.read_bytes() == out.read_bytes()


def test_a_segmenter_needs_whole_word_masking(tmp_path):
    with pytest.raises(
        generator.PretrainingDataError, match="^`word_segmenter`=rjieba needs `do_whole_word_mask`$"
    ):
        create(tmp_path, "out", word_segmenter="rjieba")
    assert not list(tmp_path.iterdir())


def test_dynamic_masking_masks_whole_words(tokenizer):
    """run_pretraining.py --dynamic_masking: every predicted token's word (a segmented Chinese word,
    or a token and its ## pieces) is predicted whole, with one [MASK]/random/unchanged draw."""
    lines = NEWS.read_text(encoding="utf-8").splitlines()
    stream = tokenizer.tokenize(lines).flat_values.numpy()  # the corpus's tokens, in order
    continues = WordGrouper(tokenizer.vocab.tokens, True, "rjieba").continues(lines, stream)
    vocab = tokenizer.vocab
    dataset = dynamic_masking_dataset(
        [str(NEWS)],
        VOCAB,
        batch_size=32,
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        seed=5,
        shuffle_buffer_size=100,
        do_whole_word_mask=True,
        word_segmenter="rjieba",
    )
    masked_words, masked_pieces = 0, 0
    for batch in dataset.take(4).as_numpy_iterator():
        for row in range(32):
            real = batch["masked_lm_weights"][row] > 0
            positions = batch["masked_lm_positions"][row][real]
            original = batch["input_ids"][row].copy()
            original[positions] = batch["masked_lm_ids"][row][real]
            predicted = np.zeros(SEQ, bool)
            predicted[positions] = True
            is_mask = batch["input_ids"][row] == vocab.mask_id
            separators = np.flatnonzero(original == vocab.sep_id)
            # segments A and B
            for start, end in [(1, separators[0]), (separators[0] + 1, separators[1])]:
                segment = original[start:end]
                # A segment is a run of the corpus's tokens;
                # theirs say which tokens continue a word.
                at = next(
                    i
                    for i in range(len(stream))
                    if np.array_equal(stream[i : i + len(segment)], segment)
                )
                # [continuations]
                within = np.flatnonzero(continues[at + 1 : at + len(segment)]) + start + 1
                np.testing.assert_array_equal(predicted[within], predicted[within - 1])
                np.testing.assert_array_equal(
                    is_mask[within][predicted[within]], is_mask[within - 1][predicted[within]]
                )
                masked_words += np.sum(predicted[within] & ~np.isin(within - 1, within))
                masked_pieces += sum(
                    predicted[i] and vocab.tokens[original[i]].startswith("##") for i in within
                )
    assert masked_words > 20 and masked_pieces > 0  # Chinese words and ## pieces were masked whole


def test_run_pretraining_trains_with_dynamic_whole_word_masking(tmp_path):
    opts = PretrainingOptions(
        bert_config_file=write_tiny_config(tmp_path, vocab_size=len(BertTokenizer(VOCAB).vocab)),
        input_file=str(NEWS),
        output_dir=str(tmp_path / "out"),
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        train_batch_size=8,
        num_train_steps=2,
        num_warmup_steps=1,
        save_checkpoints_steps=2,
        iterations_per_loop=2,
        dynamic_masking=True,
        vocab_file=VOCAB,
        do_whole_word_mask=True,
        word_segmenter="rjieba",
        verbose=False,
    )
    results = run_pretraining(opts, tf.distribute.get_strategy())
    assert np.isfinite(results["loss"]) and results["loss"] > 0
    assert tf.train.latest_checkpoint(opts.output_dir).endswith("-2")


def test_run_pretraining_refuses_whole_word_flags_where_they_cannot_apply(tmp_path):
    common = [
        f"--input_file={NEWS}",
        f"--output_dir={tmp_path / 'out'}",
        "--bert_config_file=configs/tiny/bert_config.json",
        "--do_train",
    ]
    assert script_failures(
        "run_pretraining.py",
        common + ["--do_whole_word_mask"],
        common + ["--dynamic_masking", f"--vocab_file={VOCAB}", "--word_segmenter=rjieba"],
    ) == [
        (
            1,
            "run_pretraining.py: error: --do_whole_word_mask needs --dynamic_masking: TFRecords "
            "are masked when create_pretraining_data.py writes them (pass it there)",
        ),
        (1, "run_pretraining.py: error: --word_segmenter=rjieba needs --do_whole_word_mask"),
    ]
    assert not (tmp_path / "out").exists()
