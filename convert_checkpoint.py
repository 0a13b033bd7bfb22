"""Convert a checkpoint of any format the loader reads to google-research/bert's TF1 or bert_tf's.

    python convert_checkpoint.py --input_checkpoint=hf/bert-base-uncased --output_dir=bert_base_tf1
    python convert_checkpoint.py --input_checkpoint=uncased_L-12_H-768_A-12 \\
        --output_dir=bert_base --to=bert_tf

It prints the `--init_checkpoint`, `--bert_config_file` and `--vocab_file` flags to run on
the output. The logic is in `bert_tf/checkpoints/convert.py`, the flags in
`bert_tf/checkpoints/convert_flags.py`, the main in `bert_tf/checkpoints/convert_cli.py`.
"""

from bert_tf import script
from bert_tf.checkpoints.convert_flags import define_convert_flags

if __name__ == "__main__":
    define_convert_flags()
    script.run("bert_tf.checkpoints.convert_cli:main")
