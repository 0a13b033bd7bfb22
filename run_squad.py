"""Fine-tune BERT for extractive question answering on SQuAD v1.1 or v2.0.

    python run_squad.py --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --data_dir=squad \\
        --output_dir=out/squad --do_train --do_eval --do_predict \\
        --train_batch_size=32 --learning_rate=3e-5 --num_train_epochs=2
    # SQuAD 2.0: add --version_2_with_negative (reads train-v2.0.json and dev-v2.0.json)
"""

from absl import app

from bert_tf.cli_help import list_flags_in_help
from bert_tf.finetuning.cli import finetuning_main
from bert_tf.finetuning.flags import define_finetuning_flags
from bert_tf.tasks.question_answering import build_task, define_flags

if __name__ == "__main__":
    define_finetuning_flags(max_seq_length=384)
    define_flags()
    list_flags_in_help()
    app.run(finetuning_main(build_task))
