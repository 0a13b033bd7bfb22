"""What `export_model.py` exports (`--model_type`), here without TensorFlow so that its flags are
defined from it (`bert_tf.script`)."""

# The task heads (`bert_tf.checkpoints.task_heads.TASK_MODELS`), and the TF-Hub-style pair.
MODEL_TYPES = ("classifier", "span", "token", "multiple_choice", "hub")
CLASS_MODEL_TYPES = ("classifier", "token")  # those whose outputs are classes, named by --labels
