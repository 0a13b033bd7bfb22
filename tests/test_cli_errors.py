"""run_reporting_user_errors: one line and a non-zero exit for a user error, Ctrl-C or SIGTERM; a bug keeps its
traceback."""

import keras
import pytest

from bert_tf.cli_errors import Terminated, run_reporting_user_errors


def raising(error):
    def main(argv):
        raise error
    return main


@pytest.mark.parametrize("error, code, line", [
    (ValueError("--vocab_file=v.txt: no such file\nmore detail"), 1, "tool.py: error: --vocab_file=v.txt: no such file"),
    (KeyboardInterrupt(), 130, "tool.py: interrupted"),
    (Terminated(), 143, "tool.py: terminated"),
])
def test_user_errors_and_ctrl_c_end_in_one_line(capsys, error, code, line):
    with pytest.raises(SystemExit) as exit_:
        run_reporting_user_errors(raising(error), ["/some/dir/tool.py"])
    assert exit_.value.code == code
    assert capsys.readouterr().err == line + "\n"


def test_a_bug_is_not_reported_as_user_error():
    with pytest.raises(ZeroDivisionError):
        run_reporting_user_errors(raising(ZeroDivisionError("bug")), ["tool.py"])


class Refusing(keras.layers.Layer):
    """A layer whose call() refuses its input, as one checking user data does."""

    def call(self, inputs):
        raise ValueError("x: bad\nmore detail")


def test_an_error_in_a_layers_call_reports_its_own_message(capsys):
    with pytest.raises(SystemExit) as exit_:  # Keras re-raises it as "Exception encountered when calling ..."
        run_reporting_user_errors(lambda argv: Refusing()(keras.ops.ones((1, 2))), ["tool.py"])
    assert exit_.value.code == 1
    assert capsys.readouterr().err == "tool.py: error: x: bad\n"

