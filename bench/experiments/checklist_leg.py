"""An experiment, measured and not shipped: two retrieval legs from the checklist.

``checklist``: the norms whose Contextual Integrity reading and conditions fit the flows read in
the case, for each flow in the order the checklist decides the case (the deciding flow first):
the paragraphs the verdict rests on, the prohibitions the flow meets, then the candidate
permissions in the checklist's own order. ``flows``: BM25 with the sentences in which the facts
reader reads a use or disclosure (and the sentence before each) for its query.

Tuned with the other legs (issue 15), each was given weight 0 by every fold. Alone (synthetic
section hit@10 / recall@10 / MRR): flows 0.832 / 0.819 / 0.645 against BM25's 0.939 / 0.926 /
0.759; on the real dev cases checklist 0.667 / 0.492 / 0.416 and flows 0.611 / 0.463 / 0.283.
Measure them again:

    python bench/experiments/checklist_leg.py --cases \\
        ../shared/data/cases/val_generate_cases_hipaa_applicability.csv
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from privacy_checklist.reasoning.text import sentence_spans
from privacy_checklist.retrieval.base import NO_FILTERS, Filters, Hit, check_query

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.reading.facts import FactReader
    from privacy_checklist.retrieval.base import Retriever
    from privacy_checklist.retrieval.index import RetrievalIndex

NAME = "checklist"
#: the leg that searches with the case's flows for its query (``flows``)
FLOWS = "flows"


class ChecklistLeg:
    """The norms the checklist weighs for a case, ranked as it weighs them."""

    name = NAME

    def __init__(self, reasoner: ChecklistReasoner, index: RetrievalIndex) -> None:
        self.reasoner = reasoner
        self.index = index

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        from privacy_checklist.reasoning.checklist.decide import combine

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


class FlowsLeg:
    """BM25 with the case's flows for its query: the sentences in which the facts reader reads
    a use or disclosure (with the sentence before each, where its parties are often named),
    not the whole narrative; the whole narrative when no flow is read."""

    name = FLOWS

    def __init__(self, reader: FactReader, index: RetrievalIndex) -> None:
        self.reader = reader
        self.index = index

    def query(self, text: str) -> str:
        """The words of the flows' sentences, in the narrative's order."""
        starts = [start for start, _ in sentence_spans(text)] or [0]
        spans: set[tuple[int, int]] = set()
        for flow in self.reader.read(text).flows:
            if flow.verb is None:
                continue
            at = max(i for i, start in enumerate(starts) if start <= flow.verb.start)
            first = starts[max(0, at - 1)]
            last = starts[at + 1] if at + 1 < len(starts) else len(text)
            spans.add((first, last))
        if not spans:
            return text
        merged: list[tuple[int, int]] = []
        for first, last in sorted(spans):
            if merged and first <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
            else:
                merged.append((first, last))
        return " ".join(text[a:b].strip() for a, b in merged)

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        text = check_query(query)
        hits = self.index.method("bm25").search(self.query(text), k, filters)
        return [Hit(node=h.node, score=h.score, method=self.name, via=h.via) for h in hits]


def retrievers(kb: KnowledgeBase) -> Mapping[str, Callable[[RetrievalIndex], Retriever]]:
    """The index's methods with the checklist leg added (``RetrievalIndex(retrievers=...)``);
    the checklist (and spaCy) load on the leg's first use. The hybrid weighs the leg when the
    shipped fusion names it (``pcheck retrieval-tune`` chose a weight for it)."""
    from privacy_checklist.retrieval.hybrid import shipped_fusion
    from privacy_checklist.retrieval.index import HYBRID_LEGS, RETRIEVERS, hybrid

    def build(index: RetrievalIndex) -> Retriever:
        from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

        return ChecklistLeg(ChecklistReasoner(kb, blend=False), index)

    def build_flows(index: RetrievalIndex) -> Retriever:
        from privacy_checklist.reasoning.reading.facts import FactReader

        return FlowsLeg(FactReader(kb), index)

    out = {**RETRIEVERS, NAME: build, FLOWS: build_flows}
    weights = shipped_fusion().weights
    extra = tuple(leg for leg in (NAME, FLOWS) if weights.get(leg, 0.0) > 0)
    if extra:
        out["hybrid"] = hybrid((*HYBRID_LEGS, *extra))
    return out


def main() -> int:
    """Each leg alone, with BM25 beside it, against the cases' gold regulations."""
    import argparse

    from privacy_checklist.ingest.cases import read_cases
    from privacy_checklist.kg.kb import load
    from privacy_checklist.retrieval.evaluate import evaluate
    from privacy_checklist.retrieval.index import RetrievalIndex

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--cases", required=True, help="a case file with gold regulations")
    parser.add_argument("-k", type=int, default=10)
    args = parser.parse_args()
    kb = load()
    index = RetrievalIndex(kb, embeddings=False, retrievers=retrievers(kb))
    cases = read_cases(args.cases)
    for leg in ("bm25", NAME, FLOWS):
        result = evaluate(
            cases, lambda text, leg=leg: [h.node for h in index.search(text, leg, args.k)]
        )
        figures = "  ".join(f"{k} {v:.3f}" for k, v in result["section"].items())
        print(f"{leg:<10} {result['n']} cases, section: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
