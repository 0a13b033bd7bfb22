"""run_reporting_user_errors: one line and a non-zero exit for a user error, Ctrl-C or SIGTERM; a
bug keeps its traceback and exits 70."""

import os
import signal
import subprocess
import sys
import textwrap

import keras
import pytest
import tensorflow as tf
from absl import flags

from bert_test_utils import REPO, assert_fails_with_line, run_script, write_word_vocab
from bert_tf import io_utils
from bert_tf.bert_config import ConfigError
from bert_tf.cli_errors import Terminated, naming_output_flag, run_reporting_user_errors
from bert_tf.errors import UserInputError

READ_ONLY = "/sys"  # sysfs: no new file, even for root, whom a chmod does not stop


def raising(error):
    def main(argv):
        raise error

    return main


@pytest.mark.parametrize(
    "error, code, line",
    [
        (
            UserInputError("--vocab_file=v.txt: no such file\nmore detail"),
            1,
            "tool.py: error: --vocab_file=v.txt: no such file",
        ),
        (
            ConfigError("c.json: hidden_size is missing"),
            1,
            "tool.py: error: c.json: hidden_size is missing",
        ),
        (flags.IllegalFlagValueError("flag --x=y: bad"), 1, "tool.py: error: flag --x=y: bad"),
        (
            FileNotFoundError(2, "No such file or directory", "in.txt"),
            1,
            "tool.py: error: [Errno 2] No such file or directory: 'in.txt'",
        ),
        (
            tf.errors.NotFoundError(None, None, "in.tfrecord; No such file or directory"),
            1,
            "tool.py: error: in.tfrecord; No such file or directory",
        ),
        (KeyboardInterrupt(), 130, "tool.py: interrupted"),
        (Terminated(), 143, "tool.py: terminated"),
    ],
)
def test_user_errors_and_ctrl_c_end_in_one_line(capsys, error, code, line):
    with pytest.raises(SystemExit) as exit_:
        run_reporting_user_errors(raising(error), ["/some/dir/tool.py"])
    assert exit_.value.code == code
    assert capsys.readouterr().err == line + "\n"


def test_a_user_error_words_the_settings_it_names_as_the_scripts_flags(capsys):
    flag_values = flags.FlagValues()
    flags.DEFINE_integer("max_seq_length", 128, "Tokens.", flag_values=flag_values)
    error = UserInputError("`max_seq_length`=3 is too short for `model_type`=span")
    assert error.settings == ("max_seq_length", "model_type")
    with pytest.raises(SystemExit):
        run_reporting_user_errors(raising(error), ["tool.py"], flag_values)
    # model_type is no flag of this tool: it keeps the library's wording.
    line = "tool.py: error: --max_seq_length=3 is too short for `model_type`=span"
    assert capsys.readouterr().err == line + "\n"


@pytest.mark.parametrize(
    "error",
    [
        # TensorFlow's, not about input
        ValueError("Attempt to convert a value ({'input_word_ids': PerReplica:{"),
        ZeroDivisionError("division by zero"),
    ],
)
def test_a_bug_says_so_with_its_traceback_and_exits_70(capsys, error):
    with pytest.raises(SystemExit) as exit_:
        run_reporting_user_errors(raising(error), ["tool.py"])
    assert exit_.value.code == 70
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        "tool.py: internal error: this is a bug in bert_tf, not a problem with your input; please "
        "report it with the command line and the traceback below"
    )
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[-1] == f"{type(error).__name__}: {error}"


class Refusing(keras.layers.Layer):
    """A layer whose call() refuses its input, as one checking user data does."""

    def call(self, inputs):
        raise UserInputError("x: bad\nmore detail")


def test_an_error_in_a_layers_call_reports_its_own_message(capsys):
    # Keras re-raises it as "Exception encountered when calling ..."
    with pytest.raises(SystemExit) as exit_:
        run_reporting_user_errors(lambda argv: Refusing()(keras.ops.ones((1, 2))), ["tool.py"])
    assert exit_.value.code == 1
    assert capsys.readouterr().err == "tool.py: error: x: bad\n"


# A script's main that writes its output through io_utils.atomic_output, then waits.
WRITING_SCRIPT = textwrap.dedent("""
    import sys, time
    from bert_tf import io_utils
    from bert_tf.cli_errors import run_reporting_user_errors

    def main(argv):
        with io_utils.atomic_output(argv[1]) as tmp:
            open(tmp, "w").write("half")
            print("writing", flush=True)
            time.sleep(120)

    run_reporting_user_errors(main, ["tool.py", sys.argv[1]])
""")


def test_sigterm_ends_a_script_in_one_line_and_removes_its_temporary(tmp_path):
    """SIGTERM, as `timeout`, Slurm and Kubernetes send it, unwinds the run as Ctrl-C does."""
    process = subprocess.Popen(
        [sys.executable, "-c", WRITING_SCRIPT, str(tmp_path / "out.txt")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    try:
        assert process.stdout.readline() == "writing\n"  # its temporary is there
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, stderr.strip().splitlines()[-1:]) == (143, ["tool.py: terminated"])
    assert list(tmp_path.iterdir()) == []


def test_an_output_in_a_read_only_directory_names_the_flag_and_the_directory():
    with pytest.raises(UserInputError) as error:
        with naming_output_flag("output_file", f"{READ_ONLY}/vocab.txt"):
            io_utils.atomic_write_text(f"{READ_ONLY}/vocab.txt", "[PAD]\n")
    assert (
        str(error.value)
        == f"--output_file={READ_ONLY}/vocab.txt: cannot write in {READ_ONLY} (Permission denied)"
    )
    with pytest.raises(FileNotFoundError):  # other errors pass through
        with naming_output_flag("output_file", "out.txt"):
            open("/no/such/input.txt")


def test_create_pretraining_data_into_a_read_only_directory_names_output_file(tmp_path):
    (tmp_path / "corpus.txt").write_text("The cat sat.\nIt was warm.\n\nA dog ran.\nIt was fast.\n")
    vocab = write_word_vocab(tmp_path / "vocab.txt", [(tmp_path / "corpus.txt").read_text()])
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={tmp_path / 'corpus.txt'}",
        f"--vocab_file={vocab}",
        f"--output_file={READ_ONLY}/data.tfrecord",
    )
    assert_fails_with_line(
        result,
        f"create_pretraining_data.py: error: --output_file={READ_ONLY}/data.tfrecord: "
        f"cannot write in {READ_ONLY} (Permission denied)",
    )
