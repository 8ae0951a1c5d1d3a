"""Learned layers: the offline reasoner's features and model, the checklist's learned layer."""
