"""Data only: the project's RDF vocabulary (``privacy-checklist.ttl``), the seeds of the role
and attribute graphs, the norm cues and patterns, the curated norm conditions and their kinds,
and the one stop-word list. The built graphs are in ``kg/builtin``."""
