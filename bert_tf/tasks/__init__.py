"""Fine-tuning tasks: GLUE-style classification, SQuAD, tagging and multiple choice, one module each."""
