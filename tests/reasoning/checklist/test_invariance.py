"""Invariance (issue 27 §5) on a slice of the corpus: what must not matter — a sentence about
the weather before, inside or after the case, a greeting, an emoji, the people renamed — leaves
the default method's verdict as it was. The whole corpus is measured by
``bench/corpus/invariance.py`` (the Results page); this keeps the mechanism from sliding back
(embedding the whole text, a greeting moved one verdict in ten)."""

from __future__ import annotations

import importlib.util
import random

import pytest

from privacy_checklist.ingest.corpus import read_corpus
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from tests.conftest import REPO

#: narratives taken from each writer (the first ones), and writers taken (every other one)
PER_WRITER = 1
#: the flip rate allowed on the slice (the first twelve of each writer: the Results page; the
#: target is 2%). With the layer embedding the whole text, 11.9% of those flipped; with it
#: embedding the flows' sentences 3.1%; the default now (the checklist alone, reading the
#: conditions with the learned reader) 1.5%.
ALLOWED = 0.08


def invariance_module():
    path = REPO / "bench" / "corpus" / "invariance.py"
    spec = importlib.util.spec_from_file_location("invariance", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def narratives():
    corpus = read_corpus(sorted((REPO / "bench" / "data" / "corpus").glob("*.jsonl")))
    seen: dict[str, int] = {}
    kept = []
    for narrative in corpus.narratives:
        seen[narrative.writer] = seen.get(narrative.writer, 0) + 1
        if seen[narrative.writer] <= PER_WRITER:
            kept.append(narrative)
    return kept[::2]


def test_what_must_not_matter_does_not_move_the_verdict(narratives) -> None:
    invariance = invariance_module()
    reasoner = ChecklistReasoner(kbmod.load(None))
    neutral = invariance.neutral_sentences()
    rng = random.Random(27)
    flipped, checked = [], 0
    for narrative in narratives:
        base = reasoner.check(narrative.text).label
        for kind, text in invariance.variants(narrative, neutral, rng).items():
            checked += 1
            if reasoner.check(text).label != base:
                flipped.append((narrative.id, kind))
    assert checked >= 60
    assert len(flipped) <= ALLOWED * checked, flipped


def _narrative(writer: str, nid: str):
    corpus = read_corpus([REPO / "bench" / "data" / "corpus" / f"{writer}.jsonl"])
    return next(n for n in corpus.narratives if n.id == nid)


def test_rename_changes_people_only_each_to_a_name_of_their_own() -> None:
    invariance = invariance_module()
    narrative = _narrative("w31", "w31-003")
    text = invariance.renamed(narrative, random.Random(1))
    assert text is not None
    # the hospice (an organisation, though spaCy's small model calls it a person) keeps its
    # name; the patient, an individual, loses his
    assert "Lakeside Hospice" in narrative.text and "Lakeside Hospice" in text
    assert "Okafor" in narrative.text and "Okafor" not in text
    # two people named in one narrative are not made one person
    two = _narrative("w22", "w22-012")
    renamed = invariance.renamed(two, random.Random(1))
    assert renamed is not None
    assert len({first for first, _ in invariance.NAMES if first in renamed}) >= 2
