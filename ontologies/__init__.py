"""Data only: the project's RDF vocabulary (``privacy-checklist.ttl``), the seeds of the role
and attribute graphs, the norm cues and patterns, the curated norm conditions and their kinds,
and the one stop-word list. The built graphs are in ``kg/builtin``."""

from importlib import resources
from pathlib import Path


def path(name: str) -> Path:
    """A data file of this package (``ontologies/NAME``): the one place its files are found."""
    return Path(str(resources.files("privacy_checklist.ontologies") / name))
