"""Data formats and input pipelines."""
