"""``bm25-rewrite``: BM25 on the query with the law's terms appended, read by CI-ES's reading
(:func:`~privacy_checklist.retrieval.cies.read_case`) of the roles and HIPAA information types
the query's words reach (no LLM needed)."""

from __future__ import annotations

from privacy_checklist.kg.concepts import ConceptGraph
from privacy_checklist.retrieval.base import NO_FILTERS, Filters, Hit, Retriever, check_query
from privacy_checklist.retrieval.cies import read_case, rewrite


class RewriteRetriever:
    """A retriever (BM25 over the full specifications) searched with the rewritten query."""

    name = "bm25-rewrite"

    def __init__(self, bm25: Retriever, roles: ConceptGraph, attributes: ConceptGraph) -> None:
        self.bm25, self.roles, self.attributes = bm25, roles, attributes

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        reading = read_case(check_query(query), self.roles, self.attributes)
        hits = self.bm25.search(rewrite(query, reading), k, filters)
        return [
            Hit(node=h.node, score=h.score, method=self.name, spans=h.spans, via=h.via)
            for h in hits
        ]
