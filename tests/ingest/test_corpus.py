"""The labelled corpus (ingest/corpus.py): a writer's set read into narratives with their
labels, every unusable line reported with its reason, and a set scored by ``pcheck eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privacy_checklist.ingest.cases import CaseFileError, read_case_file
from privacy_checklist.ingest.corpus import read_corpus, twin_pairs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "corpus" / "w01.jsonl"


def test_a_writers_set_is_read_with_its_labels() -> None:
    corpus = read_corpus([SAMPLE])
    assert corpus.skipped == [] and corpus.writers == ["w01"]
    first = corpus.narratives[0]
    assert first.id == "w01-001" and first.verdict == "permit" and first.twin == "w01-002"
    twin = next(n for n in corpus.narratives if n.id == first.twin)
    assert twin.verdict != first.verdict and twin.twin == first.id
    flow = first.deciding
    assert flow is not None
    for said in flow.parts.values():  # every labelled part is words of the text
        assert said.words == "" or said.words in first.text
    assert first.facts and all(f.words in first.text for f in first.facts if f.words)


def test_unusable_lines_are_reported_with_their_reason(tmp_path: Path) -> None:
    good = SAMPLE.read_text(encoding="utf-8").splitlines()[0]
    data = json.loads(good)
    wrong_words = {**data, "id": "x-2", "conditions": [{"kind": "k", "value": True,
                                                        "words": "not in the text"}]}  # fmt: skip
    lines = [
        good,
        "{not json",
        json.dumps({**data, "id": "x-1", "verdict": "maybe"}),
        json.dumps(wrong_words),
        good,  # the same id again
        json.dumps({**data, "id": "x-3", "text": "  "}),
    ]
    path = tmp_path / "w99.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = read_corpus([path])
    assert [n.id for n in corpus.narratives] == [data["id"]]
    reasons = [str(row) for _, row in corpus.skipped]
    assert reasons[0].startswith("line 2: not JSON")
    assert "verdict 'maybe'" in reasons[1]
    assert "k words 'not in the text' are not in the text" in reasons[2]
    assert "again (first on line 1)" in reasons[3]
    assert "no text" in reasons[4]


def test_a_corpus_file_is_a_case_file() -> None:
    cases = read_case_file(SAMPLE)
    assert len(cases.cases) == len(read_corpus([SAMPLE]).narratives)
    assert {c.expected for c in cases.cases} <= {"permit", "prohibit", "not_applicable"}
    assert all(c.label in ("Permit", "Forbid", "Not Applicable") for c in cases.cases)


def test_a_missing_or_undecodable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="no such corpus file"):
        read_corpus([tmp_path / "none.jsonl"])
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(CaseFileError, match="not UTF-8"):
        read_corpus([bad])


def test_twin_pairs_are_the_pairs_whose_verdicts_differ() -> None:
    narratives = read_corpus([SAMPLE]).narratives
    pairs = twin_pairs(narratives)
    assert pairs and all(a.twin == b.id and b.twin == a.id for a, b in pairs)
    assert all(a.verdict != b.verdict for a, b in pairs)
    assert len({(a.id, b.id) for a, b in pairs}) == len(pairs) == len(narratives) // 2
