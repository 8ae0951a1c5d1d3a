"""What every retriever shares: the documents (annotated paragraphs), hits, filters.

A document is one paragraph of the knowledge base that has a norm, with its own text, its full
specification (root to leaf, what the paper's BM25 indexed), its norm type and its place. Each
carries a content hash, so an index rebuilt after the knowledge base changed re-does only the
documents whose hash changed.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from privacy_checklist.kg.ids import RegId

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.kg.norms import Norm
    from privacy_checklist.kg.tree import RegulationTree

MAX_QUERY_CHARS = 20_000
SECTION_KINDS = ("section", "appendix")  # what a document's ``section`` can be


class QueryError(ValueError):
    """A query that cannot be searched (empty, not text)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    node: str
    text: str
    spec: str
    norm_type: str
    part: str
    section: str
    digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """A retrieved norm: its node, score, the method that found it, and why."""

    node: str
    score: float
    method: str
    spans: tuple[tuple[int, int], ...] = ()
    via: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "score": round(self.score, 6),
            "method": self.method,
            "spans": [list(s) for s in self.spans],
            "via": self.via,
        }


@dataclass(frozen=True)
class Filters:
    """Restrict hits to norm types, parts ("164") or sections ("164.512")."""

    norm_types: frozenset[str] = field(default_factory=frozenset)
    parts: frozenset[str] = field(default_factory=frozenset)
    sections: frozenset[str] = field(default_factory=frozenset)

    def allows(self, doc: Document) -> bool:
        return (
            (not self.norm_types or doc.norm_type in self.norm_types)
            and (not self.parts or doc.part in self.parts)
            and (not self.sections or doc.section in self.sections)
        )


NO_FILTERS = Filters()


def check_filters(filters: Filters, tree: RegulationTree) -> None:
    """Refuse a filter that names no norm type, part or section of the regulation, rather
    than silently match nothing.

    Raises:
        QueryError: naming the unknown value and the valid ones.
    """
    from privacy_checklist.kg.norms import NORM_TYPES

    unknown = sorted(filters.norm_types - set(NORM_TYPES))
    if unknown:
        raise QueryError(
            f"unknown norm type {', '.join(map(repr, unknown))}: use {', '.join(NORM_TYPES)}"
        )
    parts = [str(RegId.parse(n.id).part) for n in tree if n.kind == "part"]
    unknown = sorted(filters.parts - set(parts))
    if unknown:
        raise QueryError(
            f"unknown part {', '.join(map(repr, unknown))}: the parts are {', '.join(parts)}"
        )
    unknown = sorted(
        s for s in filters.sections if tree.get(s) is None or tree[s].kind not in SECTION_KINDS
    )
    if unknown:
        raise QueryError(
            f"unknown section {', '.join(map(repr, unknown))}: give the id of a section of "
            "the regulation, such as 164.512"
        )


class Retriever(Protocol):
    """One retrieval method: the top ``k`` norms for a query (see
    :data:`privacy_checklist.retrieval.index.RETRIEVERS`)."""

    @property
    def name(self) -> str: ...

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]: ...


class SearchIndex(Protocol):
    """What the reasoning layer searches: every retrieval method by name
    (:class:`privacy_checklist.retrieval.index.RetrievalIndex`)."""

    def search(
        self, query: object, method: str = ..., k: int = ..., filters: Filters = ...
    ) -> list[Hit]: ...


#: the longest text taken at all, in characters (a long court opinion's facts run to some
#: 50,000; the parser needs about 1 GB per 100,000 characters); a search reads the first
#: :data:`MAX_QUERY_CHARS` of it
MAX_CASE_CHARS = 300_000


def check_query(query: object) -> str:
    """The query as text, or :class:`QueryError` (empty, whitespace, not text, too long)."""
    if not isinstance(query, str):
        raise QueryError(f"a query must be text, not {type(query).__name__}")
    if not query.strip():
        raise QueryError("the query is empty: pass a case narrative or a few words")
    if len(query) > MAX_CASE_CHARS:
        raise QueryError(
            f"the case is {len(query):,} characters, more than the {MAX_CASE_CHARS:,} read: "
            "give the statement of facts, not the whole record"
        )
    if "\x00" in query:
        raise QueryError("the case holds NUL bytes: binary, not text")
    return query


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def documents(kb: KnowledgeBase, norms: dict[str, Norm] | None = None) -> list[Document]:
    """The annotated paragraphs of a knowledge base, in document order, typed by ``norms``
    (default: ``kb.norms``, the norms as everything reads them)."""
    out = []
    norms = kb.norms if norms is None else norms
    for node in kb.tree:
        norm = norms.get(node.id)
        if norm is None:
            continue
        section = kb.tree.section_of(node.id)
        spec = kb.tree.full_specification(node.id)
        text = " ".join(filter(None, [node.title, node.text]))
        out.append(
            Document(
                node=node.id,
                text=text,
                spec=spec,
                norm_type=norm.norm_type,
                part=str(RegId.parse(node.id).part),
                section=section.id if section else "",
                digest=digest(text, spec, norm.norm_type),
            )
        )
    return out


def top(
    scored: Iterable[tuple[str, float]],
    docs: dict[str, Document],
    k: int,
    filters: Filters,
    method: str,
) -> list[Hit]:
    """The ``k`` best-scored documents the filters allow, best first (a tie: by node id)."""
    ranked = heapq.nsmallest(
        max(0, k),
        ((n, s) for n, s in scored if s > 0 and filters.allows(docs[n])),
        key=lambda item: (-item[1], item[0]),
    )
    return [Hit(node=n, score=float(s), method=method) for n, s in ranked]


def unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))
