"""privacy_checklist.kg."""
