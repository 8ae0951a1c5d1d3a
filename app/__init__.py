"""privacy_checklist.app."""
