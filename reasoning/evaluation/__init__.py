"""The evaluation harness: run folders, resumable logs, metrics."""
