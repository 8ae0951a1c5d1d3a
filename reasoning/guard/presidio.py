"""Microsoft Presidio's analyzer, offline (the ``guard`` extra): the type-based baseline of
``pcheck guard-eval --presidio`` and the person names ``pcheck guard --presidio`` adds."""

from __future__ import annotations

from typing import Any


def presidio_analyzer(nlp: Any = None, required: bool = False) -> Any | None:
    """Presidio's analyzer, offline: the given spaCy pipeline (else a blank one) as its NLP
    engine, its predefined recognizers, and no public-suffix download; None when Presidio is
    not installed.

    Raises:
        MissingExtra: ``required`` and Presidio is not installed (naming the extra).
    """
    from privacy_checklist.kg.extras import MissingExtra, require

    try:
        analyzer = require("presidio_analyzer", "guard", "Presidio's recognizers")
        nlp_engine = require("presidio_analyzer.nlp_engine", "guard", "Presidio's recognizers")
        import tldextract
    except (MissingExtra, ImportError):
        if required:
            raise
        return None
    # its e-mail recognizer asks tldextract for the public-suffix list, which it would
    # download: the module's extractor becomes one that reads only the list shipped with it
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
    import spacy

    engine = nlp_engine.SpacyNlpEngine(
        models=[{"lang_code": "en", "model_name": "blank"}],
        ner_model_configuration=nlp_engine.NerModelConfiguration(),
    )
    engine.nlp = {"en": nlp if nlp is not None else spacy.blank("en")}
    registry = analyzer.RecognizerRegistry()
    registry.load_predefined_recognizers(nlp_engine=engine)
    return analyzer.AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])
