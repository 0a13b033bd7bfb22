"""The fine-tuning driver shared by every task script: flags, optimizer, training loop, best checkpoint."""
