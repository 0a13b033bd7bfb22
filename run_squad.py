"""Fine-tune BERT for extractive question answering on SQuAD v1.1 or v2.0.

    python run_squad.py --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --data_dir=squad \\
        --output_dir=out/squad --do_train --do_eval --do_predict \\
        --train_batch_size=32 --learning_rate=3e-5 --num_train_epochs=2
    # SQuAD 2.0: add --version_2_with_negative (reads train-v2.0.json and dev-v2.0.json)
"""

from bert_tf import script
from bert_tf.finetuning.flags import define_finetuning_flags
from bert_tf.tasks.flags import define_squad_flags

if __name__ == "__main__":
    define_finetuning_flags(max_seq_length=384)
    define_squad_flags()
    script.run("bert_tf.tasks.cli:run_squad_main")
