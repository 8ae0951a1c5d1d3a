"""The Streamlit browser (``pcheck app``): the law, the graphs, checking a case, the editors'
queue and evaluation runs, on the same knowledge base, store and code paths as the command
line."""
