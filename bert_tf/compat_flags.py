"""google-research/bert's flags that bert_tf accepts but does not read, so that its command
lines run unchanged. Each help text says why the flag has no effect here.

google-research/bert's TPU flags of extract_features.py (--use_tpu, --master,
--num_tpu_cores) are the run scripts' own, in `bert_tf.shared_flags`, whose help texts say
that extract_features.py ignores them. Like every flag module, this one imports no TensorFlow.
"""

from __future__ import annotations

from absl import flags

from bert_tf.shared_flags import SharedFlag

IGNORED_FLAGS = {
    "use_one_hot_embeddings": SharedFlag(
        flags.DEFINE_bool,
        False,
        "Accepted for google-research/bert command-line compatibility; no effect. There it picks "
        "the TPU's embedding lookup (a one-hot matmul instead of a gather), which gives the same "
        "results; Keras chooses the lookup here.",
    ),
}


def define_ignored_flags(*names: str, flag_values: flags.FlagValues = flags.FLAGS) -> None:
    """Defines the accepted-but-ignored flags `names` (keys of `IGNORED_FLAGS`)."""
    for name in names:
        flag = IGNORED_FLAGS[name]
        flag.define(name, flag.default, help=flag.help, flag_values=flag_values, **flag.arguments)
