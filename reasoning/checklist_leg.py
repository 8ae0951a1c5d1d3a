"""A retrieval leg from the checklist: the norms whose Contextual Integrity reading and conditions
fit the flows read in the case (``checklist`` in ``pcheck search``, ``retrieval-eval`` and
``retrieval-tune``, and a leg the hybrid may weigh).

Retrieval sits left of reasoning, so the leg is made here and handed to the index
(:func:`retrievers`): for each flow the facts reader reads, in the order the checklist decides
the case (the deciding flow first), the paragraphs the verdict rests on, the prohibitions the
flow meets, then the candidate permissions in the checklist's own order (met, unknown, unmet;
those whose recipient the flow fits before those open to any recipient).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from privacy_checklist.retrieval.base import NO_FILTERS, Filters, Hit, check_query

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.checklist_reasoner import ChecklistReasoner
    from privacy_checklist.retrieval.base import Retriever
    from privacy_checklist.retrieval.index import RetrievalIndex

NAME = "checklist"


class ChecklistLeg:
    """The norms the checklist weighs for a case, ranked as it weighs them."""

    name = NAME

    def __init__(self, reasoner: ChecklistReasoner, index: RetrievalIndex) -> None:
        self.reasoner = reasoner
        self.index = index

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        from privacy_checklist.reasoning.checklist import combine

        text = check_query(query)
        checklists = self.reasoner.checklists(text)
        case = combine(checklists)
        ordered = ([case] if case is not None else []) + [c for c in checklists if c is not case]
        nodes: list[str] = []
        for checklist in ordered:
            nodes += list(checklist.rests_on)
            nodes += [p.reading.node for p in checklist.prohibitions]
            nodes += [c.reading.node for c in checklist.candidates]
        docs = self.index.by_node
        ranked = [n for n in dict.fromkeys(nodes) if n in docs and filters.allows(docs[n])][
            : max(0, k)
        ]
        return [
            Hit(node=n, score=1.0 / rank, method=self.name, via="checklist")
            for rank, n in enumerate(ranked, start=1)
        ]


def retrievers(kb: KnowledgeBase) -> Mapping[str, Callable[[RetrievalIndex], Retriever]]:
    """The index's methods with the checklist leg added (``RetrievalIndex(retrievers=...)``);
    the checklist (and spaCy) load on the leg's first use. The hybrid weighs the leg when the
    shipped fusion names it (``pcheck retrieval-tune`` chose a weight for it)."""
    from privacy_checklist.retrieval.hybrid import shipped_fusion
    from privacy_checklist.retrieval.index import HYBRID_LEGS, RETRIEVERS, hybrid

    def build(index: RetrievalIndex) -> Retriever:
        from privacy_checklist.reasoning.checklist_reasoner import ChecklistReasoner

        return ChecklistLeg(ChecklistReasoner(kb, blend=False), index)

    out = {**RETRIEVERS, NAME: build}
    if shipped_fusion().weights.get(NAME, 0.0) > 0:
        out["hybrid"] = hybrid((*HYBRID_LEGS, NAME))
    return out
