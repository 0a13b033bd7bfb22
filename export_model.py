"""Export a checkpoint (any format the loader reads) as a SavedModel: a task model or the TF-Hub-style pair.

A fine-tuning run keeps its best weights in `<output_dir>/best/ckpt`.

    python export_model.py --model_type=classifier --init_checkpoint=out/mrpc/best/ckpt \\
        --vocab_file=vocab.txt --labels=0,1 --max_seq_length=128 --export_dir=export/mrpc
    python export_model.py --model_type=span --init_checkpoint=out/squad/best/ckpt \\
        --vocab_file=vocab.txt --max_seq_length=384 --doc_stride=128 --export_dir=export/squad
    python export_model.py --model_type=hub --init_checkpoint=output/pretraining_demo \\
        --vocab_file=vocab.txt --export_dir=export/bert   # export/bert/{preprocessing,encoder}
"""

from absl import app

from bert_tf.cli_help import list_flags_in_help
from bert_tf.export.cli import define_flags, main

if __name__ == "__main__":
    define_flags()
    list_flags_in_help()
    app.run(main)
