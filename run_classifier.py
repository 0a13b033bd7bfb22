"""Fine-tune BERT for sentence(-pair) classification: GLUE tasks, XNLI, or your own CSV/TSV files.

    python run_classifier.py --task_name=MRPC --data_dir=glue_data/MRPC \\
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=out/mrpc \\
        --do_train --do_eval --do_predict --train_batch_size=32 --learning_rate=2e-5 \\
        --num_train_epochs=3
    # your own data: train.csv, dev.csv, test.csv in --data_dir, with a header row
    python run_classifier.py --task_name=csv --data_dir=reviews --text_a_column=review \\
        --label_column=stars ...
"""

from bert_tf import script
from bert_tf.finetuning.flags import define_finetuning_flags
from bert_tf.tasks.flags import define_classifier_flags

if __name__ == "__main__":
    define_finetuning_flags()
    define_classifier_flags()
    script.run("bert_tf.tasks.cli:run_classifier_main")
