"""The guard: the PHI recogniser, purposes, span decisions, rewrite and re-check,
conversations, and its measure."""
