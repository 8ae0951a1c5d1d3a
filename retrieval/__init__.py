"""privacy_checklist.retrieval."""
