"""Each variable's depth in a BERT model, for layer-wise learning rates."""

from __future__ import annotations

from bert_tf.models.bert_encoder import BertEncoder


def layer_depths(encoder: BertEncoder) -> dict[str, int]:
    """`variable.path -> depth`: 0 for the embeddings, `i + 1` for Transformer block `i`.

    Everything else (the pooler, task and pretraining heads) is the top,
    `num_hidden_layers + 1`, which `LayerwiseAdamW` assumes for unlisted variables.
    """
    depths = {variable.path: 0 for variable in encoder.embeddings.weights}
    for i, block in enumerate(encoder.transformer_layers):
        depths.update({variable.path: i + 1 for variable in block.weights})
    return depths
