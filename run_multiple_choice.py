"""Fine-tune BERT for multiple choice on SWAG's CSV files (train, val and test.csv in --data_dir).

    python run_multiple_choice.py --data_dir=swagaf/data \\
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=out/swag \\
        --do_train --do_eval --do_predict --max_seq_length=128

The defaults follow the paper's SWAG run: batch 16, learning rate 2e-5, 3 epochs.
The logic is in `bert_tf/tasks/multiple_choice.py`.
"""

from bert_tf import script
from bert_tf.finetuning.flags import define_finetuning_flags

if __name__ == "__main__":
    define_finetuning_flags(train_batch_size=16, learning_rate=2e-5)
    script.run("bert_tf.tasks.cli:run_multiple_choice_main")
