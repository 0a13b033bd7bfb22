"""The sentence vectors feature extraction adds beside the token features (`--pooling`), here
without TensorFlow so that the flags are defined from them (`bert_tf.script`)."""

POOLINGS = ("none", "cls", "mean")
