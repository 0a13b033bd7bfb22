"""Fine-tune BERT on several tasks at once (MT-DNN): one shared encoder, one head per task.

    python run_multitask.py \\
        --tasks=MRPC:classifier:glue/MRPC,RTE:classifier:glue/RTE,conll:ner:conll2003 \\
        --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
        --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=out/multitask \\
        --do_train --do_eval --task_sampling=temperature --sampling_temperature=2 \\
        --export_dir=export/multitask
    # then, per task:
    python run_classifier.py --task_name=MRPC --init_checkpoint=out/multitask/MRPC/best ...

The logic is in `bert_tf/multitask/runner.py`, the main in `bert_tf/multitask/cli.py`.
"""

from bert_tf import script
from bert_tf.finetuning.flags import define_finetuning_flags
from bert_tf.multitask.flags import define_multitask_flags

if __name__ == "__main__":
    define_finetuning_flags()
    define_multitask_flags()
    script.run("bert_tf.multitask.cli:main")
