"""The checklist as a retrieval leg: the norms it weighs for a case, in its order."""

from __future__ import annotations

import json
from pathlib import Path

from privacy_checklist.app.cli import main
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.reasoning.checklist.decide import combine
from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
from privacy_checklist.reasoning.checklist_leg import ChecklistLeg, retrievers
from privacy_checklist.retrieval.base import Filters
from privacy_checklist.retrieval.index import RetrievalIndex

CASE = (
    "A detective asked the ER for the blood test results of a driver, and the hospital gave "
    "them to him without a warrant or court order."
)


def test_the_leg_ranks_what_the_verdict_rests_on_first(
    shipped: KnowledgeBase, bm25_index: RetrievalIndex
) -> None:
    reasoner = ChecklistReasoner(shipped, blend=False)
    leg = ChecklistLeg(reasoner, bm25_index)
    hits = leg.search(CASE, 10)
    case = combine(reasoner.checklists(CASE))
    assert case is not None and hits
    assert [h.node for h in hits[: len(case.rests_on)]] == [
        n for n in case.rests_on if n in bm25_index.by_node
    ][: len(hits)]
    # the law enforcement permissions the checklist weighed are among them
    assert any(h.node.startswith("164.512(f)") for h in hits)
    only = leg.search(CASE, 10, Filters(sections=frozenset({"164.512"})))
    assert only and all(bm25_index.by_node[h.node].section == "164.512" for h in only)


def test_the_index_offers_the_leg(shipped: KnowledgeBase, tmp_path: Path, capsys) -> None:
    index = RetrievalIndex(
        shipped, tmp_path / "i", embeddings=False, retrievers=retrievers(shipped)
    )
    assert index.method("checklist").name == "checklist"
    common = ["--index", str(tmp_path / "idx"), "--no-embeddings"]
    assert main(["search", CASE, "--method", "checklist", "-k", "3", "--json", *common]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3 and all(h["method"] == "checklist" for h in hits)


def test_the_flows_leg_searches_with_the_flows_sentences(
    shipped: KnowledgeBase, bm25_index: RetrievalIndex
) -> None:
    from privacy_checklist.reasoning.checklist_leg import FlowsLeg
    from privacy_checklist.reasoning.reading.facts import FactReader

    leg = FlowsLeg(FactReader(shipped), bm25_index)
    story = (
        "The clinic opened in 1998 and has forty staff. Its parking lot was repaved last spring. "
        "The patient came in with a fracture. Later the nurse emailed her HIV results to her "
        "employer. The employer thanked her."
    )
    query = leg.query(story)
    # the flow's sentence and the one before it, not the clinic's history
    assert "emailed her HIV results" in query and "fracture" in query
    assert "repaved" not in query and "1998" not in query
    # no flow read: the whole text
    assert leg.query("The weather was fine.") == "The weather was fine."
    hits = leg.search(story, 5)
    assert hits and all(h.method == "flows" for h in hits)
    assert [h.node for h in hits] == [h.node for h in bm25_index.method("bm25").search(query, 5)]
