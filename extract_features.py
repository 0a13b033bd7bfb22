"""Per-token BERT activations as JSON lines: the paper's feature-based approach (section 5.4).

    python extract_features.py --input_file=input.txt --output_file=features.jsonl \
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \
        --bert_config_file=uncased_L-12_H-768_A-12/bert_config.json \
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \
        --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=32 [--pooling=mean]

Each input line is a text or `text_a ||| text_b`. The logic is in
`bert_tf/tasks/feature_extraction.py`.
"""

from bert_tf import script
from bert_tf.tasks.flags import define_feature_extraction_flags

if __name__ == "__main__":
    define_feature_extraction_flags()
    script.run("bert_tf.tasks.cli:extract_features_main")
