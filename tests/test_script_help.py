"""Each script's `--help` lists its own flags (absl lists only the main module's key flags)."""

import pytest

from bert_test_utils import REPO, run_script


@pytest.mark.parametrize("script, expected", [
    ("run_pretraining.py", ["--input_file", "--train_batch_size", "--tpu", "--dynamic_masking"]),
    ("create_vocab.py", ["--input_file", "--vocab_size", "--num_unused"]),
    ("convert_checkpoint.py", ["--input_checkpoint", "--output_dir", "--to", "--bert_config_file"]),
    ("run_squad.py", ["--init_checkpoint", "--doc_stride", "--version_2_with_negative", "--export_dir"]),
])
def test_help_lists_the_scripts_flags(script, expected):
    result = run_script(script, "--help", timeout=120)  # absl exits 1 after the help
    listed = [flag for flag in expected if f"  {flag}:" in result.stdout or f"  --[no]{flag[2:]}:" in result.stdout]
    assert listed == expected, result.stdout + result.stderr[-2000:]
    assert "--xla_" not in result.stdout  # not every library's flags, as --helpfull


def test_every_script_lists_its_flags_in_help():
    scripts = [path for path in REPO.glob("*.py") if "app.run(" in path.read_text()]
    assert len(scripts) == 10
    for path in scripts:
        assert "    list_flags_in_help()\n    app.run(" in path.read_text(), path.name
