"""Retrieval: which norms bear on a case, behind one ``search`` (BM25, sentence embeddings in
Chroma, CI-ES, hybrid), and retrieval measured on case files. Never imports the reasoning layer."""
