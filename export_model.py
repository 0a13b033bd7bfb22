"""Export a checkpoint (any format the loader reads) as a SavedModel: a task model or the Hub pair.

A fine-tuning run keeps its best weights in `<output_dir>/best/ckpt`.

    python export_model.py --model_type=classifier --init_checkpoint=out/mrpc/best/ckpt \\
        --vocab_file=vocab.txt --labels=0,1 --max_seq_length=128 --export_dir=export/mrpc
    python export_model.py --model_type=span --init_checkpoint=out/squad/best/ckpt \\
        --vocab_file=vocab.txt --max_seq_length=384 --doc_stride=128 --export_dir=export/squad
    python export_model.py --model_type=hub --init_checkpoint=output/pretraining_demo \\
        --vocab_file=vocab.txt --export_dir=export/bert   # export/bert/{preprocessing,encoder}
"""

from bert_tf import script
from bert_tf.export.flags import define_export_flags

if __name__ == "__main__":
    define_export_flags()
    script.run("bert_tf.export.cli:main")
