"""Export a checkpoint (any format the loader reads) as a SavedModel: a task model or the TF-Hub-style pair.

    python export_model.py --model_type=classifier --init_checkpoint=out/mrpc \\
        --vocab_file=vocab.txt --labels=0,1 --max_seq_length=128 --export_dir=export/mrpc
    python export_model.py --model_type=span --init_checkpoint=out/squad --vocab_file=vocab.txt \\
        --max_seq_length=384 --doc_stride=128 --export_dir=export/squad
    python export_model.py --model_type=hub --init_checkpoint=output/pretraining_demo \\
        --vocab_file=vocab.txt --export_dir=export/bert   # export/bert/{preprocessing,encoder}
"""

from absl import app, flags

from bert_tf.cli_errors import run_reporting_user_errors
from bert_tf.export import export_hub_pair, export_task_model
from bert_tf.export.checkpoint_model import MODEL_TYPES, model_from_checkpoint
from bert_tf.tokenization import BertTokenizer

flags.DEFINE_enum("model_type", None, list(MODEL_TYPES), "What to export; hub = preprocessing + encoder pair.")
flags.DEFINE_string("init_checkpoint", None, "The checkpoint (TF1, Model Garden, Hugging Face, bert_tf).")
flags.DEFINE_string("bert_config_file", None, "bert_config.json; default: the one stored with the checkpoint.")
flags.DEFINE_string("vocab_file", None, "The WordPiece vocab; stored in the export as an asset.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
flags.DEFINE_string("export_dir", None, "Where the SavedModel goes.")
flags.DEFINE_list("labels", None, "Class names, in label-id order (classifier, token).")
flags.DEFINE_integer("num_classes", None, "Classes; default: the checkpoint head's width.")
flags.DEFINE_integer("max_seq_length", 128, "Longest packed sequence of the text signatures.")
flags.DEFINE_integer("max_answer_length", 30, "Span: longest answer in tokens.")
flags.DEFINE_integer("doc_stride", 128, "Span: tokens between the starts of context windows.")
flags.DEFINE_integer("max_query_length", 64, "Span: question tokens kept.")
flags.DEFINE_bool("version_2_with_negative", False, "Span: SQuAD 2.0, an empty answer when [CLS] wins.")
flags.DEFINE_bool("jit_compile", False, "Compile serving_default with XLA (faster on CPU; TF Serving then "
                  "needs --xla_cpu_compilation_enabled). Task models only.")
for _name in ("model_type", "init_checkpoint", "vocab_file", "export_dir"):
    flags.mark_flag_as_required(_name)
FLAGS = flags.FLAGS


def main(argv):
    del argv
    if FLAGS.jit_compile and FLAGS.model_type == "hub":
        raise ValueError("--jit_compile applies to task models (their serving_default), not --model_type=hub")
    num_classes = FLAGS.num_classes or (len(FLAGS.labels) if FLAGS.labels else None)
    model = model_from_checkpoint(FLAGS.init_checkpoint, FLAGS.model_type, FLAGS.bert_config_file, num_classes)
    tokenizer = BertTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
    if FLAGS.model_type == "hub":
        paths = export_hub_pair(model, FLAGS.export_dir, tokenizer=tokenizer, seq_length=FLAGS.max_seq_length)
        print("\n".join(f"{name}: {path}" for name, path in paths.items()))
        return
    print(export_task_model(model, FLAGS.export_dir, tokenizer=tokenizer, seq_length=FLAGS.max_seq_length,
                            labels=FLAGS.labels, max_answer_length=FLAGS.max_answer_length,
                            doc_stride=FLAGS.doc_stride, max_query_length=FLAGS.max_query_length,
                            version_2_with_negative=FLAGS.version_2_with_negative,
                            jit_compile=FLAGS.jit_compile))


if __name__ == "__main__":
    app.run(lambda argv: run_reporting_user_errors(main, argv))
