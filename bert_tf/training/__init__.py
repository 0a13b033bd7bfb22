"""Optimizers, schedules, distribution and precision set-up for pretraining and fine-tuning."""
