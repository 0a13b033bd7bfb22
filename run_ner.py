"""Fine-tune BERT for token tagging: CoNLL-2003 NER (BIO or BIOES tags), or plain tags such as POS.

    # --data_dir holds train.txt, dev.txt and test.txt in CoNLL format
    # (`word POS chunk tag` or `word tag`)
    python run_ner.py --data_dir=conll2003 --vocab_file=cased_L-12_H-768_A-12/vocab.txt \\
        --do_lower_case=false \\
        --init_checkpoint=cased_L-12_H-768_A-12/bert_model.ckpt --output_dir=out/ner \\
        --do_train --do_eval --do_predict --train_batch_size=32 --learning_rate=5e-5 \\
        --num_train_epochs=3
"""

from bert_tf import script
from bert_tf.finetuning.flags import define_finetuning_flags

if __name__ == "__main__":
    define_finetuning_flags()
    script.run("bert_tf.tasks.cli:run_ner_main")
