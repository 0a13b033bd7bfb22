"""A fixed random pretraining batch for the train-step benchmarks, with every schema feature."""

from __future__ import annotations

import numpy as np

from bert_tf.bert_config import BertConfig

SEQ, PREDICTIONS = 128, 20


def random_batch(config: BertConfig, batch: int) -> dict[str, np.ndarray]:
    """`batch` rows of `SEQ` tokens, `PREDICTIONS` masked positions each; the same on every call."""
    rng = np.random.default_rng(0)
    return {
        "input_ids": rng.integers(1000, config.vocab_size, (batch, SEQ)).astype("int32"),
        "input_mask": np.ones((batch, SEQ), "int32"),
        "segment_ids": (np.arange(SEQ)[None] >= SEQ // 2).repeat(batch, 0).astype("int32"),
        "masked_lm_positions": np.sort(rng.choice(SEQ, (batch, PREDICTIONS)), axis=1).astype(
            "int32"
        ),
        "masked_lm_ids": rng.integers(1000, config.vocab_size, (batch, PREDICTIONS)).astype(
            "int32"
        ),
        "masked_lm_weights": np.ones((batch, PREDICTIONS), "float32"),
        "next_sentence_labels": rng.integers(0, 2, batch).astype("int32"),
    }
