"""The knowledge base (the Privacy Checklist itself): the regulation tree with its
cross-references and definitions, the role and attribute graphs, the norms and the editors'
store, and the built copy that ships in ``builtin/``. It imports only the ingest layer."""
