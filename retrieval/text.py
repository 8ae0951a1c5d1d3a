"""Tokens for BM25: lower case, stemmed, stop words out, section numbers and markers kept.

"§ 164.512(f)(1)" gives the tokens ``164.512(f)(1)``, ``164.512`` (so a cited section matches its
paragraphs) and the marker tokens; one-character tokens are kept (the ``a`` of ``(a)`` matters).
The stemmer is Snowball's English stemmer (Porter2, the ``snowballstemmer`` package: pure
Python, no data, imported in a millisecond; NLTK's own import costs a second, which every check
paid); the stop words are the English function words of the project's one list
(``ontologies/stop_words.json``, read by :mod:`privacy_checklist.kg.lexicon`).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.lexicon import FUNCTION_WORDS

#: What BM25 drops: every English function word.
STOP_WORDS = FUNCTION_WORDS
#: How the tokens are made (the stemmer and the stop words): saved tokens made another way are
#: not reused (bm25.py)
TOKENIZER = (
    "snowball-english:" + hashlib.sha256(" ".join(sorted(STOP_WORDS)).encode()).hexdigest()[:12]
)
_TOKEN = re.compile(
    r"\d{3}\.\d{1,4}[a-z]?(?:\([^()\s]{1,8}\))*|\([a-z]{1,4}\)|\([0-9]{1,3}\)|[a-z][a-z'-]*|\d+"
)


@lru_cache(maxsize=1)
def _stemmer() -> Any:  # snowballstemmer.stemmer (no types shipped)
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    """A word's stem (lower case in, as BM25's tokens are)."""
    return str(_stemmer().stemWord(word))


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)
        if token[0].isdigit() and "." in token:
            out.append(token)
            if "(" in token:  # a paragraph: its section too
                out.append(RegId.parse(token).section or token)
        elif token.startswith("("):
            out.append(token)
        elif token not in STOP_WORDS:
            out.append(stem(token.strip("'-")) if token.isalpha() or "-" in token else token)
    return [t for t in out if t]


def match_spans(text: str, terms: set[str]) -> tuple[tuple[int, int], ...]:
    """Character spans of ``text`` whose tokens are among ``terms`` (for highlighting)."""
    spans = []
    for match in _TOKEN.finditer(text.lower()):
        token = match.group(0)
        key = token if token[0].isdigit() or token.startswith("(") else stem(token.strip("'-"))
        if key in terms and token not in STOP_WORDS:
            spans.append((match.start(), match.end()))
    return tuple(spans)
