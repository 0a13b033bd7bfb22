"""Pretrain BERT (masked LM + next sentence) on TFRecords, from one CPU to TPU pods.

    # the embedded demo (tiny BERT, Wikipedia sample)
    python run_pretraining.py
    # TFRecords, on a TPU
    python run_pretraining.py --input_file=gs://bucket/records/*.tfrecord \\
        --bert_config_file=configs/base/bert_config.json --output_dir=gs://bucket/out \\
        --do_train --do_eval --train_batch_size=256 --num_train_steps=1000000 --tpu=my-tpu
"""

from bert_tf import script
from bert_tf.pretraining.flags import define_pretraining_flags

if __name__ == "__main__":
    define_pretraining_flags()
    script.run("bert_tf.pretraining.cli:main")
