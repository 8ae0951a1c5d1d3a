"""The law's logic: the catalogue of conditions, the decision and what would change it; the
checklist method and checklist-llm."""
