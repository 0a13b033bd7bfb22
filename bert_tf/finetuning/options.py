"""`FineTuningOptions`: what the common fine-tuning flags say, as one value."""

from __future__ import annotations

import dataclasses

from bert_tf.training import console


@dataclasses.dataclass
class FineTuningOptions:
    """The settings every fine-tuning script shares (tests build it directly).

    The defaults are the paper's: batch 32, learning rate 5e-5, 3 epochs, 10% warmup. Each
    field but `verbose` is the flag of the same name.

    Attributes:
        data_dir: the task's data directory; None where the task names its files otherwise
            (run_squad.py's `train_file`).
        vocab_file: the WordPiece vocab.txt the model was pretrained with.
        output_dir: the run's checkpoints, eval results and predictions.
        bert_config_file: the model's bert_config.json; None: the one stored with the checkpoint.
        init_checkpoint: the checkpoint to start from, in any format `load_checkpoint` reads.
        do_lower_case: lower-case the text and strip its accents (uncased models).
        do_train, do_eval, do_predict: whether to train, evaluate, and write predictions.
        max_seq_length: WordPiece tokens per sequence, `[CLS]` and `[SEP]` included.
        train_batch_size, eval_batch_size, predict_batch_size: the global batch sizes.
        learning_rate: AdamW's peak learning rate.
        num_train_epochs: the training epochs (may be fractional).
        warmup_proportion: the share of the training steps with linear warmup.
        google_bert_optimizer: google-research/bert's AdamW epsilon and learning-rate decay.
        head_initializer: the task head's initializer, one of `HEAD_INITIALIZERS`.
        layerwise_lr_decay: each layer below the top gets this factor on its rate (1: off).
        label_smoothing: the classification losses' label smoothing.
        gradual_unfreezing: unfreeze the layers top down over the first epoch (ULMFiT).
        mlm_aux_weight: the weight of an auxiliary masked-LM loss on the task's text (0: off).
        save_checkpoints_steps: also back up every N steps; None: at each epoch's end only.
        iterations_per_loop: training steps per `tf.function` call (`steps_per_execution`).
        export_dir: where to export the fine-tuned model; None: no export.
        dtype: the compute precision, one of `DTYPE_POLICIES`.
        jit_compile: compile the train step with XLA.
        random_seed: the seed of initialisation, shuffling and dropout.
        verbose: Keras's `fit`/`predict` verbosity: a bar on a terminal, else a line an epoch.
    """

    data_dir: str | None
    vocab_file: str
    output_dir: str
    bert_config_file: str | None = None
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
    google_bert_optimizer: bool = False
    head_initializer: str = "normal"
    layerwise_lr_decay: float = 1.0
    label_smoothing: float = 0.0
    gradual_unfreezing: bool = False
    mlm_aux_weight: float = 0.0
    save_checkpoints_steps: int | None = None
    iterations_per_loop: int = 1
    export_dir: str | None = None
    dtype: str = "float32"
    jit_compile: bool = False
    random_seed: int | None = 12345
    verbose: int = dataclasses.field(default_factory=console.keras_verbose)
