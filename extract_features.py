"""Per-token BERT activations as JSON lines: the paper's feature-based approach (section 5.4).

    python extract_features.py --input_file=input.txt --output_file=features.jsonl \
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \
        --bert_config_file=uncased_L-12_H-768_A-12/bert_config.json \
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \
        --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=32 [--pooling=mean]

Each input line is a text or `text_a ||| text_b`. The logic is in
`bert_tf/tasks/feature_extraction.py`.
"""

from absl import app

from bert_tf.cli_help import list_flags_in_help
from bert_tf.tasks import feature_extraction

if __name__ == "__main__":
    feature_extraction.define_flags()
    list_flags_in_help()
    app.run(feature_extraction.main)
