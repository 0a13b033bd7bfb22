"""Masked-LM + next-sentence pretraining: the training loop, checkpoints and the run script."""
