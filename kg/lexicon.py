"""Everyday phrases into lookup keys: normalisation, singular forms, head-first n-grams.

Case narratives name parties and information with noise around the word that matters ("the
treating orthopedic surgeon", "City of Plainfield police department", "Dr. Smith's nurse").
English noun phrases put their head last, so candidates are tried from the longest n-gram
ending at the head down to the head alone, then the rest. The stop words are data
(``ontologies/stop_words.json``, one list shared with BM25's tokenizer); the clause words and
titles are below.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from privacy_checklist.ontologies import path as ontology_path


def stop_words_path() -> Path:
    return ontology_path("stop_words.json")


_STOP = json.loads(stop_words_path().read_text(encoding="utf-8"))
#: English function words: the one stop-word list. BM25's tokenizer drops them all.
FUNCTION_WORDS: frozenset[str] = frozenset(
    w for group in _STOP["function_words"].values() for w in group
)
#: Words that never decide a match: the determiners and pronouns among the function words,
#: and the phrase words (more of them, and the adjectives narratives add: "the treating
#: surgeon"). "of", "and", "for" ... are no stop words here: they cut and split a phrase.
STOP_WORDS: frozenset[str] = frozenset(
    _STOP["function_words"]["determiners_and_pronouns"]
) | frozenset(_STOP["phrase_words"])
#: Words that start a clause or a prepositional phrase after the noun phrase's head: the
#: phrase is cut there ("a billing company hired by the clinic" -> "billing company").
CLAUSE_WORDS = frozenset(
    """who whom that which whose where when while because hired working employed acting
    representing regarding concerning including named called from at in for with by on to
    under about over into through during after before via kept stored held maintained sent
    shared obtained collected related relating showing indicating containing used given
    listing describing documenting disclosed released faxed emailed provided requested
    prepared written taken performed done made""".split()
)
#: Titles that name a role by themselves ("Dr. Smith" is a doctor).
TITLES = {
    "dr": "doctor",
    "doctor": "doctor",
    "nurse": "nurse",
    "officer": "officer",
    "detective": "detective",
    "sheriff": "sheriff",
    "judge": "judge",
    "rev": "clergyman",
    "reverend": "clergyman",
    "father": "priest",
    "rabbi": "rabbi",
    "sgt": "police officer",
    "sergeant": "police officer",
    "lt": "police officer",
    "agent": "federal agent",
}
_IRREGULAR = {
    "women": "woman",
    "men": "man",
    "children": "child",
    "people": "person",
    "wives": "wife",
    "lives": "life",
    "feet": "foot",
    "teeth": "tooth",
    "data": "data",
    "analyses": "analysis",
    "diagnoses": "diagnosis",
    "prognoses": "prognosis",
    "x-rays": "x-ray",
    "statuses": "status",
}
MAX_CHARS = 300


def normalize(phrase: str) -> str:
    """Lower case, ASCII quotes and dashes, possessives and punctuation removed, spaces folded."""
    text = unicodedata.normalize("NFKC", phrase)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("–", "-").replace("—", " ")
    text = text.lower()
    text = re.sub(r"(\w)'s\b", r"\1", text)
    text = re.sub(r"(\w)s'(?=\s|$)", r"\1s", text)
    text = re.sub(r"[^\w\s/+&.-]", " ", text)
    text = re.sub(r"(?<!\w)[.-]+|[.-]+(?!\w)", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def singulars(word: str) -> list[str]:
    """The word and its likely singular forms (without a dictionary)."""
    out = [word]
    if word in _IRREGULAR:
        out.append(_IRREGULAR[word])
    elif len(word) > 3 and word.endswith("ies"):
        out.append(word[:-3] + "y")
    elif len(word) > 3 and re.search(r"(ss|x|ch|sh|zz)es$", word):
        out.append(word[:-2])
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        out.append(word[:-1])
    return out


@dataclass(frozen=True, slots=True)
class Candidate:
    """An n-gram of the phrase to look up: its words, and whether it ends at the head."""

    text: str
    start: int
    end: int
    _: KW_ONLY
    at_head: bool
    coverage: float


def _trim(words: list[str]) -> list[str]:
    while words and words[0] in STOP_WORDS | {"of", "and", "or"}:
        words = words[1:]
    while words and words[-1] in STOP_WORDS | {"of", "and", "or"}:
        words = words[:-1]
    return words


def content_words(phrase: str, *, cut: bool = True) -> list[str]:
    """The words of a normalized phrase, titles expanded, stop words dropped at the edges.

    With ``cut``, the phrase ends before a clause or prepositional phrase that follows its
    head ("a billing company hired by the clinic"), or before a participle that starts one
    ("a cloud vendor hosting patient records").
    """
    words = normalize(phrase[:MAX_CHARS]).split()
    if cut:
        for i, word in enumerate(words[1:], start=1):
            before = [w for w in words[:i] if w not in STOP_WORDS]
            if not before:
                continue
            after = words[i + 1] if i + 1 < len(words) else None
            participle = (
                word.endswith("ing")
                and len(word) > 5
                and words[i - 1] not in CLAUSE_WORDS | {"of", "and", "or"}
                and (after in STOP_WORDS or len(before) >= 2)
            )
            if word in CLAUSE_WORDS or participle:
                words = words[:i]
                break
    words = _trim(words)
    if words and words[0].rstrip(".") in TITLES and len(words) > 1:
        title = TITLES[words[0].rstrip(".")]
        words = title.split() if len(words) <= 3 else [*title.split(), *words[1:]]
    return words


def candidates(phrase: str, max_words: int = 6) -> Iterator[Candidate]:
    """N-grams to look up, best first: the whole phrase, the n-grams ending at a head
    (longest first), then the others.

    A phrase with "of" is read as its parts too: the part before "of" holds the head
    ("employees of the clinic", "Blue Cross of Illinois"), the part after it second ("City of
    Plainfield police department").
    """
    whole = content_words(phrase, cut=False)
    words = content_words(phrase)
    if not words:
        return
    segments = [words]
    if "of" in words:
        cut = len(words) - 1 - words[::-1].index("of")
        before, after = _trim(words[:cut]), _trim(words[cut + 1 :])
        segments = [s for s in (before, after, words) if s]
    seen: set[str] = set()
    total = len(words)
    if whole and whole != words:
        seen.add(" ".join(whole))
        yield Candidate(" ".join(whole), 0, len(whole), at_head=True, coverage=1.0)
    for rank, segment in enumerate(segments):
        n = len(segment)
        for i in range(max(0, n - max_words), n):
            text = " ".join(segment[i:])
            if segment[i] in STOP_WORDS | {"of"} or text in seen:
                continue
            seen.add(text)
            share = (n - i) / (n if len(segments) > 1 else total)
            yield Candidate(text, i, n, at_head=True, coverage=share * (1.0 if rank == 0 else 0.85))
    for segment in segments:
        n = len(segment)
        for j in range(n - 1, 0, -1):
            for i in range(max(0, j - max_words), j):
                ngram = segment[i:j]
                text = " ".join(ngram)
                if ngram[0] in STOP_WORDS | {"of"} or ngram[-1] in STOP_WORDS | {"of"}:
                    continue
                if text in seen:
                    continue
                seen.add(text)
                yield Candidate(text, i, j, at_head=False, coverage=(j - i) / total)


def keys(text: str) -> list[str]:
    """Lookup keys for an n-gram: as is, with its last word singular, hyphens as spaces."""
    words = text.split()
    out: list[str] = []
    for last in singulars(words[-1]):
        key = " ".join([*words[:-1], last])
        for variant in (key, key.replace("-", " "), key.replace(" ", "")):
            if variant not in out:
                out.append(variant)
    return out
