"""Evaluation metrics of the fine-tuning tasks, on top of scikit-learn, scipy, seqeval and Model Garden."""
