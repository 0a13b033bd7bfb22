"""The fine-tuning tasks' metrics, on top of scikit-learn, scipy, seqeval and Model Garden, and
pretraining's next-sentence AUC (a Keras metric)."""
