"""Fitting the identifier tagger (:mod:`.tagger`), with the writers' identifiers varied.

Each labelled item is read as written and, ``copies`` more times, with every labelled
identifier replaced by a made-up one of the same type (Faker, in many locales: names of many
origins; places; dates and ages written in figures or in words; phones, emails and numbers in
the forms people type), cased as the original was (lower, capitals, or as written); now and
then the whole copy is in capitals or in lower case, as ICU notes and hurried questions are.
The words around an identifier are the writers'; only the identifiers vary, so the tagger
learns the contexts that mark one rather than the few names one writer thought of.

    python -m privacy_checklist.reasoning.guard.tagger_fit DATA_DIR [DATA_DIR ...]
        [--copies 2] [--out reasoning/data/identifier_tagger.crfsuite]

Needs ``pip install python-crfsuite faker`` (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from privacy_checklist.reasoning.guard.tagger import (
    MODEL,
    ONES,
    TENS,
    TYPES,
    features,
    labels,
    tokens,
)
from privacy_checklist.reasoning.text import data_path

LOCALES = [
    "en_US",
    "en_GB",
    "es_MX",
    "fr_FR",
    "de_DE",
    "it_IT",
    "pl_PL",
    "pt_BR",
    "en_IN",
    "vi_VN",
    "tr_TR",
    "nl_NL",
    "en_IE",
    "fil_PH",
    "sv_SE",
    "cs_CZ",
    "ro_RO",
    "hu_HU",
]
ORDINAL = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth"}
MONTHS = "January February March April May June July August September October November \
December".split()


def in_words(n: int) -> str:
    """A number under 200 in words ("ninety-three", "a hundred and two")."""
    if n >= 100:
        rest = n - 100
        return "a hundred" + (f" and {in_words(rest)}" if rest else "")
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return TENS[tens] + (f"-{ONES[ones]}" if ones else "")


def ordinal(n: int) -> str:
    if n in ORDINAL:
        return ORDINAL[n]
    if n < 20:
        return ONES[n] + "th"
    tens, ones = divmod(n, 10)
    if not ones:
        return TENS[tens][:-1] + "ieth"
    return f"{TENS[tens]}-{ordinal(ones)}"


class Maker:
    """Made-up identifiers of each type."""

    def __init__(self, seed: int = 0) -> None:
        from faker import Faker

        self.rng = random.Random(seed)
        self.fakers = [Faker(locale) for locale in LOCALES]
        for number, fake in enumerate(self.fakers):
            fake.seed_instance(seed + number)

    def fake(self) -> Any:
        return self.rng.choice(self.fakers)

    def make(self, kind: str, like: str) -> str:
        value = getattr(self, f"_{kind.lower()}", self._id)()
        return self._case(value, like)

    def _case(self, value: str, like: str) -> str:
        letters = [c for c in like if c.isalpha()]
        if letters and all(c.isupper() for c in letters) and len(letters) > 1:
            return value.upper()
        if letters and all(c.islower() for c in letters):
            return value.lower()
        return value

    def _name(self) -> str:
        fake, r = self.fake(), self.rng.random()
        if r < 0.3:
            return str(fake.last_name())
        if r < 0.5:
            return str(fake.first_name())
        if r < 0.6:
            return f"{fake.last_name()}, {fake.first_name()}"
        if r < 0.68:
            return f"{fake.first_name()[0]}. {fake.last_name()}"
        return f"{fake.first_name()} {fake.last_name()}"

    def _date(self) -> str:
        d = self.fake().date_between(start_date="-90y", end_date="+1y")
        month, r = MONTHS[d.month - 1], self.rng.random()
        forms = [
            f"{d.month}/{d.day}",
            f"{d.month:02d}/{d.day:02d}/{d.year}",
            f"{d.month}-{d.day}-{d.year % 100:02d}",
            f"{d.day}.{d.month}.{d.year}",
            f"{month} {d.day}",
            f"{month[:3]} {d.day}, {d.year}",
            f"{d.day} {month[:3].lower()}",
            f"the {ordinal(d.day)} of {month}",
            f"{month} {ordinal(d.day)}",
            f"{d.isoformat()}",
        ]
        return forms[int(r * len(forms))]

    def _age(self) -> str:
        n = self.rng.randint(90, 109)
        return self.rng.choice([str(n), in_words(n), f"{n} y/o", f"{n}yo"])

    def _phone(self) -> str:
        a, b, c = self.rng.randint(201, 989), self.rng.randint(200, 999), self.rng.randint(0, 9999)
        return self.rng.choice(
            [
                f"({a}) {b}-{c:04d}",
                f"{a}-{b}-{c:04d}",
                f"{a}.{b}.{c:04d}",
                f"{a} {b} {c:04d}",
                f"{b}-{c:04d}",
            ]
        )

    _fax = _phone

    def _email(self) -> str:
        fake = self.fake()
        user = fake.user_name()
        domain = fake.free_email_domain()
        if self.rng.random() < 0.25:
            return f"{user} at {domain.replace('.', ' dot ')}"
        return f"{user}@{domain}"

    def _url(self) -> str:
        return str(self.fake().url()).removeprefix("https://").removeprefix("http://").rstrip("/")

    def _ip(self) -> str:
        return str(self.fake().ipv4())

    def _id(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return str(self.rng.randint(10_000, 99_999_999))
        if r < 0.5:
            a, b, c = (
                self.rng.randint(900, 999),
                self.rng.randint(10, 99),
                self.rng.randint(0, 9999),
            )
            return self.rng.choice([f"{a}-{b}-{c:04d}", f"{a} {b} {c:04d}", f"{a}.{b}.{c:04d}"])
        if r < 0.75:
            letters = "".join(self.rng.choice("ABCDEFGHJKMNPRSTWXYZ") for _ in range(3))
            return f"{letters}{self.rng.randint(100000, 9999999)}"
        return str(self.fake().bothify(self.rng.choice(["#??-####", "??######", "####-###-##"])))

    def _address(self) -> str:
        fake = self.fake()
        return str(self.rng.choice([fake.street_address(), fake.postcode(), fake.street_name()]))

    def _location(self) -> str:
        return str(self.fake().city())

    def _hospital(self) -> str:
        fake = self.fake()
        place = self.rng.choice([fake.city(), fake.last_name(), fake.street_name().split()[0]])
        kind = self.rng.choice(
            [
                "Medical Center",
                "Hospital",
                "Regional",
                "Clinic",
                "Family Practice",
                "Nursing Home",
                "Pharmacy",
                "Urgent Care",
                "Health",
                "Memorial Hospital",
                "Rehab",
            ]
        )
        return self.rng.choice([f"{place} {kind}", f"St. {fake.first_name()}'s", f"{place} {kind}"])


def varied(item: dict[str, Any], maker: Maker) -> dict[str, Any]:
    """The item with each labelled identifier replaced by a made-up one of its type."""
    text, spans, out, at = item["text"], sorted(item["spans"], key=lambda s: s["start"]), [], 0
    pieces: list[str] = []
    for span in spans:
        if span["start"] < at:
            continue
        kind = TYPES.get(span["type"], "ID")
        new = maker.make(kind, text[span["start"] : span["end"]])
        pieces.append(text[at : span["start"]])
        start = sum(len(p) for p in pieces)
        pieces.append(new)
        out.append({"type": span["type"], "start": start, "end": start + len(new)})
        at = span["end"]
    pieces.append(text[at:])
    return {"text": "".join(pieces), "spans": out}


#: how often a varied copy is written wholly in capitals, or wholly in lower case, as hurried
#: notes and questions are
CAPITALS, LOWER = 0.25, 0.15


def recased(item: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The item in capitals or in lower case now and then (each character alone, so that no
    offset moves: "ß" stays as it is rather than become "SS")."""
    r = rng.random()
    if r >= CAPITALS + LOWER:
        return item
    change = str.upper if r < CAPITALS else str.lower
    text = "".join(c if len(change(c)) != 1 else change(c) for c in item["text"])
    return {**item, "text": text}


def examples(items: Iterable[dict[str, Any]], copies: int, seed: int = 0) -> Iterator[Any]:
    """Each item as written, then ``copies`` varied copies of those that name an identifier,
    some of them recased (:func:`recased`)."""
    maker = Maker(seed) if copies else None
    for item in items:
        yield item
        if maker is not None and item["spans"]:
            for _ in range(copies):
                yield recased(varied(item, maker), maker.rng)


def fit(
    items: Iterable[dict[str, Any]], path: Path, copies: int = 2, iterations: int = 150
) -> Path:
    """Fit the tagger on labelled items (``text``; ``spans`` with ``start``, ``end``, ``type``)
    and their varied copies; write it to ``path`` whole or not at all."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for item in examples(items, copies):
        words = tokens(item["text"])
        if words:
            trainer.append(features(item["text"], words), labels(words, item["spans"]))
    trainer.set_params(
        {"c1": 0.05, "c2": 0.01, "max_iterations": iterations, "feature.possible_transitions": True}
    )
    tmp = path.with_suffix(".tmp")
    trainer.train(str(tmp))
    tmp.replace(path)
    return path


def read_sets(folders: Iterable[Path]) -> dict[str, list[dict[str, Any]]]:
    """Every writer's labelled items (``WRITER.jsonl``) of the folders."""
    sets: dict[str, list[dict[str, Any]]] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.jsonl")):
            lines = path.read_text(encoding="utf-8").splitlines()
            sets[path.stem] = [json.loads(line) for line in lines if line.strip()]
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="+", type=Path, help="folders of WRITER.jsonl sets")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    sets = read_sets(args.data)
    if not sets:
        parser.error("no labelled sets (WRITER.jsonl) in " + ", ".join(map(str, args.data)))
    items = [i for rows in sets.values() for i in rows]
    out = fit(items, args.out or data_path(MODEL), copies=args.copies)
    print(f"{out}: fitted on {len(items)} items of {len(sets)} writers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
