"""The tasks, one module each: the fine-tuning tasks (GLUE-style classification, SQuAD, tagging,
multiple choice) and feature extraction from a trained encoder."""
