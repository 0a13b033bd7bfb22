"""`FineTuningOptions`: what the common fine-tuning flags say, as one value."""

from __future__ import annotations

import dataclasses

from bert_tf.training import console


@dataclasses.dataclass
class FineTuningOptions:
    """The settings every fine-tuning script shares (tests build it directly).

    The defaults are the paper's: batch 32, learning rate 5e-5, 3 epochs, 10% warmup.
    """

    # None where the task's files are named otherwise (run_squad.py's --train_file)
    data_dir: str | None
    vocab_file: str
    output_dir: str
    bert_config_file: str | None = None  # default: the config stored with --init_checkpoint
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    max_seq_length: int = 128
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    google_bert_optimizer: bool = False  # google-research/bert's epsilon and learning-rate decay
    layerwise_lr_decay: float = 1.0
    label_smoothing: float = 0.0
    gradual_unfreezing: bool = False
    mlm_aux_weight: float = 0.0
    save_checkpoints_steps: int | None = (
        None  # also back up every N steps (default: each epoch's end)
    )
    iterations_per_loop: int = 1  # training steps per tf.function call (steps_per_execution)
    export_dir: str | None = None
    dtype: str = "float32"
    jit_compile: bool = False
    random_seed: int | None = 12345
    # Keras's fit and predict
    verbose: int = dataclasses.field(default_factory=console.keras_verbose)
