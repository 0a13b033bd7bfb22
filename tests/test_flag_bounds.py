"""Numeric flags out of range stop at parsing with absl's one-line error naming the flag."""

import subprocess
import sys
import textwrap

from bert_test_utils import REPO, run_script

# Values each flag refuses; a refused value never reaches the driver (where 0 divided by zero,
# looped forever, or trained with a negative learning rate).
PRETRAINING = {
    "max_seq_length": 0,
    "max_predictions_per_seq": 0,
    "train_batch_size": 0,
    "eval_batch_size": 0,
    "learning_rate": -1e-4,
    "num_train_steps": 0,
    "num_warmup_steps": -1,
    "save_checkpoints_steps": 0,
    "iterations_per_loop": 0,
    "max_eval_steps": 0,
    "log_every": 0,
    "keep_checkpoint_max": 0,
    "masked_lm_samples": -1,
}
FINETUNING = {
    "max_seq_length": 2,
    "train_batch_size": 0,
    "eval_batch_size": 0,
    "predict_batch_size": 0,
    "learning_rate": -1e-5,
    "warmup_proportion": 1.5,
    "label_smoothing": -0.1,
    "mlm_aux_weight": -1,
    "layerwise_lr_decay": 1.5,
    "save_checkpoints_steps": 0,
    "iterations_per_loop": 0,
}

# Each define function with the values its flags refuse.
DEFINES = {
    "bert_tf.pretraining.flags.define_pretraining_flags": PRETRAINING,
    "bert_tf.finetuning.flags.define_finetuning_flags": FINETUNING,
    # With no candidate span every SQuAD answer would silently be empty.
    "bert_tf.tasks.flags.define_squad_flags": {
        "max_query_length": 0,
        "doc_stride": 0,
        "n_best_size": 0,
        "max_answer_length": 0,
    },
    "bert_tf.export.flags.define_export_flags": {
        "num_classes": 0,
        "max_seq_length": 2,
        "doc_stride": 0,
        "max_query_length": -2,
        "max_answer_length": 0,
    },
}


def test_each_numeric_flag_refuses_values_out_of_range():
    """Each define function's flags, defined alone in turn in one fresh process (their names
    overlap): the flags that refuse their bad value, printed as `function: flag...`."""
    script = f"""
        import importlib
        from absl import flags
        for define, bad_values in {DEFINES!r}.items():
            module, function = define.rsplit(".", 1)
            defined_before = set(flags.FLAGS)
            getattr(importlib.import_module(module), function)()
            refused = []
            for name, value in bad_values.items():
                try:
                    flags.FLAGS[name].parse(str(value))
                except flags.IllegalFlagValueError:
                    refused.append(name)
            print(define + ": " + " ".join(refused))
            # the next define function's may share names
            for name in set(flags.FLAGS) - defined_before:
                delattr(flags.FLAGS, name)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == [
        f"{define}: {' '.join(values)}" for define, values in DEFINES.items()
    ]


def test_a_path_that_cannot_be_written_is_a_one_line_error(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\n\nthe dog ran\n")
    (tmp_path / "vocab.txt").mkdir()  # the output path is a directory
    result = run_script(
        "create_vocab.py",
        f"--input_file={corpus}",
        f"--output_file={tmp_path / 'vocab.txt'}",
        "--vocab_size=200",
        timeout=120,
    )
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("create_vocab.py: error: ") and f"{tmp_path / 'vocab.txt'}" in line, (
        result.stderr
    )


def test_the_script_exits_with_the_flag_named():
    result = run_script("run_pretraining.py", "--iterations_per_loop=0", timeout=120)
    assert result.returncode == 1
    assert "flag --iterations_per_loop=0: 0 is not a positive integer" in result.stderr
