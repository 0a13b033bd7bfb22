"""Every input and output of a whole job on TensorFlow's `ram://` file system, in one process.

`ram://` is another file system than the local one, as gs:// is: a path that bert_tf opened with
`open`, `os` or `pathlib`, or moved with a directory rename, fails here. Its directory rename moves
no files, so it also takes the copy-file-by-file path that object stores take (`io_utils`).
"""

from __future__ import annotations

import json
import pathlib
import uuid

import numpy as np
import pytest
import safetensors.numpy
import tensorflow as tf

from bert_test_utils import (
    REPO,
    TINY,
    model_garden_encoder,
    random_encoder_inputs,
    tiny_config,
    tiny_encoder,
    write_word_vocab,
)
from bert_tf import io_utils
from bert_tf.checkpoints import checkpoint_config, load_checkpoint
from bert_tf.checkpoints.convert import convert
from bert_tf.data.pretraining_data_generator import PretrainingDataOptions, create_pretraining_data
from bert_tf.finetuning import FineTuningOptions, run_finetuning
from bert_tf.models import BertPretrainer
from bert_tf.pretraining.driver import PretrainingOptions, run_pretraining
from bert_tf.tasks.sentence_prediction import SentencePredictionTask
from bert_tf.tokenization import BertTokenizer
from checkpoint_test_utils import (
    GOOGLE_CONFIG,
    google_variable_shapes,
    hugging_face_config,
    hugging_face_state,
    random_tensors,
    randomize_weights,
    write_google_tf1_checkpoint,
)

WORDS = "the cat sat on a mat while dog ran far away from home and then came back to sleep".split()
SST2 = REPO / "tests" / "fixtures" / "glue" / "SST-2"
SEQ, PREDICTIONS = 32, 5


def _write(path: str, data: str | bytes) -> str:
    tf.io.gfile.makedirs(path.rsplit("/", 1)[0])
    with tf.io.gfile.GFile(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def _corpus(documents: int = 12) -> str:
    rng = np.random.default_rng(0)
    return (
        "\n\n".join(
            "\n".join(
                " ".join(rng.choice(WORDS, size=int(rng.integers(5, 12)))) + " ." for _ in range(6)
            )
            for _ in range(documents)
        )
        + "\n"
    )


@pytest.fixture
def root():
    """A fresh `ram://` directory, deleted afterwards (the file system lives with the process)."""
    path = f"ram://storage-{uuid.uuid4().hex[:8]}"
    yield path
    if tf.io.gfile.exists(path):
        tf.io.gfile.rmtree(path)


@pytest.fixture
def inputs(root, tmp_path):
    """The corpus, vocab, bert_config.json and SST-2 files, all on ram://."""
    corpus = _corpus()
    texts = [corpus] + [(SST2 / f"{split}.tsv").read_text() for split in ("train", "dev", "test")]
    local_vocab = write_word_vocab(tmp_path / "vocab.txt", texts)
    vocab = _write(f"{root}/vocab.txt", open(local_vocab, encoding="utf-8").read())
    size = len(open(local_vocab, encoding="utf-8").read().split())
    config = f"{root}/bert_config.json"
    tiny_config(
        vocab_size=size, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    ).to_json_file(config)
    for split in ("train", "dev", "test"):
        _write(f"{root}/glue/{split}.tsv", (SST2 / f"{split}.tsv").read_text())
    return dict(
        corpus=_write(f"{root}/corpus.txt", corpus), vocab=vocab, config=config, glue=f"{root}/glue"
    )


def test_text_to_records_to_pretraining_to_finetuning_to_a_served_export(root, inputs):
    records = f"{root}/data/train.tfrecord"
    data_options = PretrainingDataOptions(
        vocab_file=inputs["vocab"],
        max_seq_length=SEQ,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=2,
    )
    # Several chunks and workers asked for: worker processes cannot see ram://, so it runs here.
    stats = create_pretraining_data(
        [inputs["corpus"]], [records], data_options, num_workers=2, chunk_bytes=400, progress=False
    )
    assert stats.examples > 16 and tf.io.gfile.listdir(f"{root}/data") == ["train.tfrecord"]

    pretrain_dir = f"{root}/pretrain"
    results = run_pretraining(
        PretrainingOptions(
            bert_config_file=inputs["config"],
            input_file=records,
            eval_file=records,
            output_dir=pretrain_dir,
            do_eval=True,
            max_seq_length=SEQ,
            max_predictions_per_seq=PREDICTIONS,
            train_batch_size=4,
            eval_batch_size=4,
            learning_rate=1e-3,
            num_train_steps=4,
            num_warmup_steps=1,
            save_checkpoints_steps=2,
            iterations_per_loop=2,
            log_every=2,
            max_eval_steps=1,
            verbose=False,
        ),
        tf.distribute.get_strategy(),
    )
    assert np.isfinite(results["loss"])
    assert tf.train.latest_checkpoint(pretrain_dir) == f"{pretrain_dir}/ckpt-4"
    assert tf.io.gfile.exists(f"{pretrain_dir}/eval_results.txt")
    assert tf.io.gfile.glob(f"{pretrain_dir}/train/events.out.tfevents.*")  # TensorBoard

    finetune_dir, export_dir = f"{root}/finetune", f"{root}/export/1"
    options = FineTuningOptions(
        data_dir=inputs["glue"],
        vocab_file=inputs["vocab"],
        output_dir=finetune_dir,
        init_checkpoint=pretrain_dir,
        do_train=True,
        do_eval=True,
        do_predict=True,
        max_seq_length=16,
        train_batch_size=2,
        eval_batch_size=2,
        predict_batch_size=2,
        learning_rate=1e-3,
        num_train_epochs=1.0,
        export_dir=export_dir,
        verbose=0,
    )
    tokenizer = BertTokenizer(inputs["vocab"])
    metrics = run_finetuning(SentencePredictionTask(options, tokenizer, "SST-2"), options)
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert {"eval_results.txt", "test_results.tsv", "SST-2.tsv"} <= set(
        tf.io.gfile.listdir(finetune_dir)
    )
    assert tf.io.gfile.exists(f"{finetune_dir}/best/ckpt.index")

    served = tf.saved_model.load(export_dir)
    outputs = served.signatures["text"](text_a=tf.constant(["a warm , funny film", "dull"]))
    assert set(outputs["label"].numpy()) <= {b"0", b"1"}
    np.testing.assert_allclose(outputs["probabilities"].numpy().sum(axis=1), 1.0, rtol=1e-5)
    # no temporary
    assert not [name for name in tf.io.gfile.listdir(f"{root}/export") if name.startswith(".")]


def _copy_tree(local: pathlib.Path, remote: str) -> None:
    for path in local.rglob("*"):
        target = f"{remote}/{path.relative_to(local).as_posix()}"
        if path.is_dir():
            tf.io.gfile.makedirs(target)
        else:
            _write(target, path.read_bytes())


def _write_checkpoint(checkpoint_format: str, directory: pathlib.Path) -> str:
    """A local checkpoint of `checkpoint_format`, as its own writer saves it; what to load."""
    directory.mkdir(parents=True)
    if checkpoint_format == "tf1":
        return write_google_tf1_checkpoint(
            directory, random_tensors(google_variable_shapes()), GOOGLE_CONFIG
        )
    if checkpoint_format in ("model_garden", "bert_tf", "keras", "tf_hub"):
        encoder = model_garden_encoder() if checkpoint_format == "model_garden" else tiny_encoder()
        encoder(random_encoder_inputs(2, 8, TINY["vocab_size"]))
        randomize_weights(encoder, seed=1)
        if checkpoint_format == "keras":
            encoder.save(directory / "encoder.keras")
            return str(directory / "encoder.keras")
        if checkpoint_format == "tf_hub":  # bert_tf's hub export of the encoder
            from bert_tf.export.encoder_export import EncoderExport

            tf.saved_model.save(EncoderExport(encoder), str(directory))
            return str(directory)
        tf.train.Checkpoint(encoder=encoder).write(str(directory / "ckpt"))
        return str(directory)
    (directory / "config.json").write_text(json.dumps(hugging_face_config()))
    state = hugging_face_state(heads=("pretraining",))
    if checkpoint_format == "hf_safetensors":
        (directory / "model.safetensors").write_bytes(safetensors.numpy.save(state))
    else:
        import torch

        torch.save(
            {name: torch.from_numpy(value) for name, value in state.items()},
            directory / "pytorch_model.bin",
        )
    return str(directory)


@pytest.mark.parametrize(
    "checkpoint_format",
    ["tf1", "model_garden", "bert_tf", "keras", "tf_hub", "hf_safetensors", "hf_pytorch"],
)
def test_every_checkpoint_format_loads_from_ram_as_from_disk(checkpoint_format, root, tmp_path):
    local = _write_checkpoint(checkpoint_format, tmp_path / "checkpoint")
    _copy_tree(tmp_path / "checkpoint", f"{root}/checkpoint")
    remote = f"{root}/checkpoint" + local[len(str(tmp_path / "checkpoint")) :]
    assert checkpoint_config(remote) == checkpoint_config(local)
    from_disk, from_ram = BertPretrainer(tiny_encoder()), BertPretrainer(tiny_encoder())
    disk_report, ram_report = load_checkpoint(local, from_disk), load_checkpoint(remote, from_ram)
    assert ram_report.format == disk_report.format == checkpoint_format
    assert ram_report.loaded == disk_report.loaded and ram_report.loaded
    for ours, theirs in zip(from_ram.encoder.weights, from_disk.encoder.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_convert_writes_and_reads_on_ram(root, tmp_path):
    local = _write_checkpoint("hf_safetensors", tmp_path / "hf")
    _copy_tree(pathlib.Path(local), f"{root}/hf")
    prefix = convert(f"{root}/hf", f"{root}/tf1", to="tf1")
    assert prefix == f"{root}/tf1/bert_model.ckpt"
    converted, direct = BertPretrainer(tiny_encoder()), BertPretrainer(tiny_encoder())
    assert load_checkpoint(prefix, converted).format == "tf1"
    load_checkpoint(local, direct)
    for ours, theirs in zip(converted.encoder.weights, direct.encoder.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(ValueError, match="holds the input checkpoint"):
        convert(prefix, f"{root}/tf1", to="bert_tf")


def test_a_directory_is_replaced_file_by_file_with_its_completion_markers_last(root):
    target = f"{root}/export"
    with io_utils.atomic_directory(target) as tmp:
        _write(f"{tmp}/old_only.txt", "old")
        _write(f"{tmp}/saved_model.pb", "old")
    with io_utils.atomic_directory(target) as tmp:
        for name in (
            "saved_model.pb",
            "checkpoint",
            "variables/variables.index",
            "ckpt-1.index",
            "variables/variables.data-00000-of-00001",
            "fingerprint.pb",
        ):
            _write(f"{tmp}/{name}", name)
        tf.io.gfile.makedirs(f"{tmp}/assets")  # empty, as a SavedModel's may be
    subdirectories, files = io_utils._tree(target)  # pylint: disable=protected-access
    assert sorted(subdirectories) == ["assets", "variables"]
    assert files == [
        "fingerprint.pb",
        "variables/variables.data-00000-of-00001",
        "ckpt-1.index",
        "variables/variables.index",
        "saved_model.pb",
        "checkpoint",
    ]
    with tf.io.gfile.GFile(f"{target}/saved_model.pb") as f:
        assert f.read() == "saved_model.pb"
    assert tf.io.gfile.listdir(root) == ["export"]  # no temporary left beside it

    with pytest.raises(RuntimeError), io_utils.atomic_directory(target) as tmp:
        _write(f"{tmp}/saved_model.pb", "half")
        raise RuntimeError("killed")
    assert tf.io.gfile.listdir(root) == ["export"] and len(io_utils._tree(target)[1]) == 6
    io_utils.remove_directory(target)
    assert not tf.io.gfile.exists(target)


def test_paths_on_any_file_system_are_compared_without_mangling(tmp_path):
    # os.path.realpath and commonpath would turn gs://b/out into <cwd>/gs:/b/out.
    assert io_utils.canonical_path("gs://b/out/../x") == "gs://b/out/../x"
    assert io_utils.is_within("gs://b/out/ckpt", "gs://b/out/") and io_utils.is_within(
        "gs://b/out", "gs://b/out"
    )
    assert not io_utils.is_within("gs://b/outer", "gs://b/out") and not io_utils.is_within(
        "gs://c/out", "gs://b/out"
    )
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    # local links are resolved
    assert io_utils.is_within(tmp_path / "link" / "ckpt", tmp_path / "real")
    assert [
        io_utils.is_local(p) for p in ("out", "/out", "file:///out", "gs://b/out", "ram://out")
    ] == [True, True, True, False, False]
