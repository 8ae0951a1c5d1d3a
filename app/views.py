"""What the command line and the browser show of the knowledge base, as data.

``pcheck show`` prints :func:`node_report`; the Regulation page of ``pcheck app`` draws it.
"""

from __future__ import annotations

from typing import Any

from privacy_checklist.kg.citations import CrossRef
from privacy_checklist.kg.definitions import TermUse
from privacy_checklist.kg.kb import KnowledgeBase


def node_report(kb: KnowledgeBase, node_id: str) -> dict[str, Any]:
    """What ``pcheck show`` prints, as data."""
    node = kb.node(node_id)
    tree = kb.tree
    path = tree.path(node.id)
    own_terms = kb.definitions.uses(node.text, node.id, tree)
    seen = {u.definition.node for u in own_terms}
    inherited = []
    for ancestor in path[:-1]:
        for use in kb.definitions.uses(ancestor.text, node.id, tree):
            if use.definition.node not in seen:
                seen.add(use.definition.node)
                inherited.append((ancestor.id, use))

    def ref_json(ref: CrossRef) -> dict[str, Any]:
        return ref.to_json()

    def definition_json(use: TermUse, where: str) -> dict[str, Any]:
        return {
            "term": use.term,
            "in": where,
            "start": use.start,
            "end": use.end,
            **use.definition.to_json(),
        }

    return {
        "id": node.id,
        "kind": node.kind,
        "title": node.title,
        "text": node.text,
        "path": [{"id": n.id, "heading": n.heading_line(), "title": n.title} for n in path],
        "children": list(node.children),
        "notes": list(node.notes),
        "refs_out": [ref_json(r) for r in kb.refs_out.get(node.id, [])],
        "refs_in": [ref_json(r) for r in kb.refs_in.get(node.id, [])],
        "definitions": [definition_json(u, node.id) for u in own_terms]
        + [definition_json(u, where) for where, u in inherited],
    }
