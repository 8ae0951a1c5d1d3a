"""The interfaces people touch: the ``pcheck`` command line (:mod:`.cli`) and the Streamlit
browser (:mod:`.ui`). Nothing imports this layer."""
