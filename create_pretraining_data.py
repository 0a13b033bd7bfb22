"""Masked-LM + next-sentence pretraining TFRecords from text, with google-research/bert's flags.

Example:
  python create_pretraining_data.py --input_file=corpus/*.txt \
    --output_file=output/pretrain.tfrecord --num_output_shards=8 \
    --vocab_file=vocab.txt --max_seq_length=128 --max_predictions_per_seq=20 --dupe_factor=10
"""

import gc

from absl import app

from bert_tf.cli_help import list_flags_in_help

gc.disable()  # No collections while TensorFlow imports: they would walk its growing object graph (~1 s).
from bert_tf.data import cli  # noqa: E402

gc.enable()

if __name__ == "__main__":
    cli.define_create_pretraining_data_flags()
    list_flags_in_help()
    app.run(cli.create_pretraining_data_main)
