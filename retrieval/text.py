"""Tokens for BM25: lower case, stemmed, stop words out, section numbers and markers kept.

"§ 164.512(f)(1)" gives the tokens ``164.512(f)(1)``, ``164.512`` (so a cited section matches its
paragraphs) and the marker tokens; one-character tokens are kept (the ``a`` of ``(a)`` matters).
NLTK's Porter stemmer needs no data; NLTK's stop-word list needs a download that is not
available offline, so the list is kept here (English function words).
"""

from __future__ import annotations

import re
from functools import lru_cache

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves shall may must also""".split()
)
_TOKEN = re.compile(
    r"\d{3}\.\d{1,4}[a-z]?(?:\([^()\s]{1,8}\))*|\([a-z]{1,4}\)|\([0-9]{1,3}\)|[a-z][a-z'-]*|\d+"
)


@lru_cache(maxsize=1)
def _stemmer():  # -> nltk.stem.PorterStemmer
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=50_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)
        if token[0].isdigit() and "." in token:
            out.append(token)
            if "(" in token:
                out.append(token.split("(")[0])
        elif token.startswith("("):
            out.append(token)
        elif token not in STOP_WORDS:
            out.append(_stem(token.strip("'-")) if token.isalpha() or "-" in token else token)
    return [t for t in out if t]


def match_spans(text: str, terms: set[str]) -> tuple[tuple[int, int], ...]:
    """Character spans of ``text`` whose tokens are among ``terms`` (for highlighting)."""
    spans = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)
        key = token if token[0].isdigit() or token.startswith("(") else _stem(token.strip("'-"))
        if key in terms and token not in STOP_WORDS:
            spans.append((match.start(), match.end()))
    return tuple(spans)
