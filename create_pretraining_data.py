"""Masked-LM + next-sentence pretraining TFRecords from text, with google-research/bert's flags.

Example:
  python create_pretraining_data.py --input_file=corpus/*.txt \
    --output_file=output/pretrain.tfrecord --num_output_shards=8 \
    --vocab_file=vocab.txt --max_seq_length=128 --max_predictions_per_seq=20 --dupe_factor=10
"""

from bert_tf import script
from bert_tf.data.flags import define_create_pretraining_data_flags

if __name__ == "__main__":
    define_create_pretraining_data_flags()
    script.run("bert_tf.data.cli:create_pretraining_data_main")
