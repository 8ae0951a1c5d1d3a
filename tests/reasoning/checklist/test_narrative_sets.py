"""The short narrative sets the checklist is measured on (``tests/data/checklist_*.csv``,
``bench/data/heldout_narratives.csv``) read whole: no row skipped, every label one of the three,
and every gold regulation a paragraph of the tree, so that the accuracy and the cited-norm
figures ``pcheck eval`` reports count every row."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from privacy_checklist.ingest.cases import read_case_file
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.evaluation.harness import case_gold_refs
from privacy_checklist.reasoning.verdict import Label
from tests.conftest import REPO

ROOT = REPO
SETS = [
    *sorted((ROOT / "tests" / "data").glob("checklist_*.csv")),
    ROOT / "bench" / "data" / "heldout_narratives.csv",
]


@pytest.fixture(scope="module")
def kb() -> kbmod.KnowledgeBase:
    return kbmod.load(None)


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_row_is_read(path: Path, kb: kbmod.KnowledgeBase) -> None:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    read = read_case_file(path)
    assert read.skipped == []
    assert len(read.cases) == len(rows) >= 40
    assert {str(Label.of_case(c.label)) for c in read.cases} == {
        "permit",
        "prohibit",
        "not_applicable",
    }
    unknown = {
        ref for case in read.cases for ref in case_gold_refs(case) or [] if ref not in kb.tree.nodes
    }
    assert unknown == set()
