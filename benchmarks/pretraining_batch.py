"""What the train-step benchmarks share: a fixed random pretraining batch with every schema
feature, and the pretraining options their peers build bert_tf's model and optimizer from."""

from __future__ import annotations

import numpy as np

from bert_tf.bert_config import BertConfig
from bert_tf.pretraining.driver import PretrainingOptions

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


def benchmark_options() -> PretrainingOptions:
    """AdamW at 1e-4 after 100 warm-up steps, of a schedule longer than any run; no files."""
    return PretrainingOptions(
        bert_config_file="",
        input_file="",
        output_dir="",
        learning_rate=1e-4,
        num_train_steps=10_000,
        num_warmup_steps=100,
        verbose=False,
    )
