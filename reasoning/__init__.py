"""privacy_checklist.reasoning."""
