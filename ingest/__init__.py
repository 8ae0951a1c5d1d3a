"""The ingest layer: outside material into plain records, with no state (eCFR part pages,
ontology files, WordNet's nouns, case files, paragraph ids and markers). It imports no other
layer."""
