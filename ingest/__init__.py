"""privacy_checklist.ingest."""
