"""Optimizers, schedules, distribution and precision set-up shared by pretraining and fine-tuning."""
