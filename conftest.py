"""pytest set-up shared by all tests: quiet TensorFlow, Keras 3 on the TF backend."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"
