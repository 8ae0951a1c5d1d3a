"""CI-ES, the paper's retrieval by Contextual Integrity characteristics, and the query rewrite.

The case's words are read through the role graph and the attribute graph (every n-gram the
graphs know: "surgeon" → health care provider → covered entity; "HIV test" → protected health
information). A norm scores by how its annotated sender, recipient and subject roles and its
information type match what the case holds (graph subsumption: a case's health care provider
meets a norm's covered entity). The rewrite appends the regulatory terms to the query, so that
BM25 and embeddings see the law's words (no LLM needed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from privacy_checklist.kg import lexicon
from privacy_checklist.kg.concepts import ConceptGraph
from privacy_checklist.retrieval.base import NO_FILTERS, Document, Filters, Hit, check_query, top

if TYPE_CHECKING:
    from privacy_checklist.kg.norms import Norm

WEIGHTS = {"sender": 2.0, "recipient": 3.0, "subject": 0.5, "information": 1.0, "purpose": 1.5}
SIMILAR = 0.6  # cosine similarity of role names that counts as a partial match
TYPE_WEIGHT = {"permit": 1.0, "prohibit": 1.0, "definition": 0.4}
MAX_WORDS = 3000
#: The attribute graph's node kind of a HIPAA information type (as the graph files write it).
HIPAA_TYPE_KIND = "hipaa"


@dataclass
class Reading:
    """What a case holds, in the law's terms, with the words that said it."""

    roles: dict[str, str] = field(default_factory=dict)  # regulatory role -> phrase
    hipaa_types: dict[str, str] = field(default_factory=dict)  # HIPAA information type -> phrase

    def terms(self) -> list[str]:
        return list(dict.fromkeys([*self.roles, *self.hipaa_types]))


def _climb(graph: ConceptGraph, node: str, is_target: Callable[[str], bool]) -> list[str]:
    up = graph.path_up(node, is_target)
    if up is None:
        return []
    out = [up[-1]]
    while True:
        parents = [e.parent for e in graph.parents(out[-1]) if e.parent not in out]
        if not parents:
            return out
        out.append(parents[0])


def read_case(text: str, roles: ConceptGraph, attributes: ConceptGraph, max_n: int = 4) -> Reading:
    """Every regulatory role and HIPAA information type the case's n-grams reach."""
    words = lexicon.normalize(text[: lexicon.MAX_CHARS * 100]).split()[:MAX_WORDS]
    reading = Reading()

    def is_role(node: str) -> bool:
        return roles.nodes[node].kind == "regulatory"

    def is_hipaa_type(node: str) -> bool:
        return attributes.nodes[node].kind == HIPAA_TYPE_KIND

    for size in range(max_n, 0, -1):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            if gram[0] in lexicon.STOP_WORDS or gram[-1] in lexicon.STOP_WORDS:
                continue
            text_gram = " ".join(gram)
            for key in lexicon.keys(text_gram):
                for node, weight in roles.index.get(key, []):
                    if weight < 0.5:
                        continue
                    for role in _climb(roles, node, is_role):
                        reading.roles.setdefault(roles.nodes[role].name, text_gram)
                for node, weight in attributes.index.get(key, []):
                    if weight < 0.5:
                        continue
                    for kind in _climb(attributes, node, is_hipaa_type):
                        reading.hipaa_types.setdefault(attributes.nodes[kind].name, text_gram)
    return reading


def role_similarity(roles: ConceptGraph) -> Callable[[str, set[str]], float]:
    """Cosine similarity of a role name to the nearest of a set of role names (MiniLM)."""
    from privacy_checklist.kg.embeddings import model

    names = sorted({n.name for n in roles.nodes.values() if n.kind == "regulatory"})
    vectors = dict(zip(names, model().encode(names, normalize_embeddings=True), strict=True))

    def similarity(name: str, others: set[str]) -> float:
        mine = vectors.get(name)
        if mine is None:
            return 0.0
        return max(
            (float(mine @ vectors[o]) for o in others if o in vectors and o != name), default=0.0
        )

    return similarity


def rewrite(query: str, reading: Reading) -> str:
    """The query with the law's terms for what it holds appended."""
    terms = reading.terms()
    return f"{query}\n{'; '.join(terms)}" if terms else query


class CIESRetriever:
    """Norms whose annotated parties and information match the case's."""

    name = "ci-es"

    def __init__(
        self,
        docs: Iterable[Document],
        norms: Mapping[str, Norm],
        roles: ConceptGraph,
        attributes: ConceptGraph,
        similarity: Callable[[str, set[str]], float] | None = None,
    ) -> None:
        self.docs = {d.node: d for d in docs}
        self.norms = norms
        self.roles = roles
        self.attributes = attributes
        self.similarity = similarity

    def search(self, query: str, k: int = 10, filters: Filters = NO_FILTERS) -> list[Hit]:
        reading = read_case(check_query(query), self.roles, self.attributes)
        return self.search_reading(reading, query, k, filters)

    def search_reading(
        self, reading: Reading, query: str, k: int = 10, filters: Filters = NO_FILTERS
    ) -> list[Hit]:
        roles, hipaa_types = set(reading.roles), set(reading.hipaa_types)
        lowered = query.lower()
        scores: dict[str, float] = {}
        why: dict[str, str] = {}
        for node in self.docs:
            norm = self.norms.get(node)
            if norm is None:
                continue
            score, reasons = 0.0, []
            for key, values in (
                ("sender", norm.sender_roles),
                ("recipient", norm.recipient_roles),
                ("subject", norm.subject_roles),
            ):
                matched = [v for v in values if v in roles]
                if matched:
                    score += WEIGHTS[key]
                    reasons.append(f"{key}: {matched[0]}")
                elif values and roles and self.similarity is not None:
                    # second: how close the norm's role name is to the case's roles
                    best = max(self.similarity(v, roles) for v in values)
                    if best >= SIMILAR:
                        score += WEIGHTS[key] * best * 0.5
                        reasons.append(f"{key} ~ {values[0]} ({best:.2f})")
            if norm.information_class and norm.information_class in hipaa_types:
                score += WEIGHTS["information"]
                reasons.append(f"information: {norm.information_class}")
            if norm.purpose and norm.purpose.lower() in lowered:
                score += WEIGHTS["purpose"]
                reasons.append(f"purpose: {norm.purpose}")
            if score:
                scores[node] = score * TYPE_WEIGHT.get(norm.norm_type, 1.0)
                why[node] = "; ".join(reasons)
        hits = top(scores.items(), self.docs, k, filters, self.name)
        return [Hit(node=h.node, score=h.score, method=h.method, via=why[h.node]) for h in hits]
