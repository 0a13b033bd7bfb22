"""The initializers a task head can start from, by name.

Apart from `bert_tf.layers.initializers`, which builds them, so that the flag modules list
them without importing TensorFlow.
"""

# Hugging Face's normal(initializer_range), and google-research/bert's truncated normal, whose
# values lie within two standard deviations and so spread 0.88x as wide.
HEAD_INITIALIZERS = ("normal", "truncated_normal")
