"""privacy_checklist.ontologies."""
