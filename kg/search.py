"""Finding units of the regulation tree by id, heading or words, and the ids to suggest for an
id that names no unit ("did you mean").

One place for both, so that the command line (``pcheck show``) and the browser (the Regulation
page) find the same units and suggest the same ids for the same typo.
"""

from __future__ import annotations

import difflib

from privacy_checklist.kg.citations import ids_in
from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.tree import Node, RegulationTree

MAX_QUERY = 200  # characters of a search (or of an unknown id) that are read
SUGGESTIONS = 5  # ids suggested for an unknown one
SIMILARITY = 0.75  # how alike (difflib's ratio) a suggested id must be spelled


class TreeSearch:
    """The units of a tree with their id, heading and text folded for search (built once)."""

    def __init__(self, tree: RegulationTree) -> None:
        self.tree = tree
        self._haystacks = [
            (
                node,
                node.id.lower(),
                " ".join(filter(None, (node.heading_line(), node.title))).lower(),
                " ".join(node.text.split()).lower(),
            )
            for node in tree
        ]

    def search(self, query: str, limit: int | None = None) -> list[Node]:
        """Units whose id, heading or text match ``query``, best first: the id itself (in any
        spelling :class:`RegId` reads: ``§ 164.502``, ``45 CFR 164.502(a)``), ids that start
        with it, the phrase in a heading, the phrase in the text, then every word anywhere."""
        q = " ".join(query[:MAX_QUERY].split()).strip().lstrip("§").strip().lower()
        if not q:
            return []
        named = RegId.try_parse(query[:MAX_QUERY])
        wanted = str(named).lower() if named is not None else q
        words = q.split()
        ranked: list[tuple[int, int, Node]] = []
        for node, node_id, heading, text in self._haystacks:
            if node_id == wanted:
                rank = 0
            elif node_id.startswith(wanted):
                rank = 1
            elif q in heading:
                rank = 2
            elif q in text:
                rank = 3
            elif all(w in heading or w in text for w in words):
                rank = 4
            else:
                continue
            ranked.append((rank, node.order, node))
        ranked.sort(key=lambda item: item[:2])
        found = [node for _, _, node in ranked]
        return found[:limit] if limit is not None else found

    def did_you_mean(self, node_id: str, limit: int = SUGGESTIONS) -> list[str]:
        """See :func:`did_you_mean`."""
        return did_you_mean(self.tree, node_id, limit)


def did_you_mean(tree: RegulationTree, node_id: str, limit: int = SUGGESTIONS) -> list[str]:
    """Existing ids close to one that names no unit, best first.

    When the text is another spelling of an existing unit's id (``§ 164.502(a)``, ``45 CFR
    164.502(a)``, ``part 164``), that id alone. Otherwise: the same id in another case or
    spacing (``164.502(A)``), ids spelled alike (difflib's ratio at least :data:`SIMILARITY`,
    most alike first, then in document order), and last the nearest existing unit the id lies
    under (``164.502(a)`` for ``164.502(a)(9)(z)``; for text that is no whole id, as
    ``164.502(a``, the first id in it), never the root. At most ``limit`` ids, the nearest
    existing unit always among them when there is one.
    """
    raw = node_id[:MAX_QUERY].strip()
    if not raw or limit <= 0:
        return []
    whole = RegId.try_parse(raw)
    if whole is not None and str(whole) in tree and str(whole) != raw:
        return [str(whole)]
    named = whole
    if named is None:
        found = ids_in(raw)
        named = found[0].id if found else None
    folded = raw.lower().replace(" ", "")
    first = [n.id for n in tree if n.id.lower().replace(" ", "") == folded and n.id != raw]
    above = named.nearest(tree) if named is not None else None
    last = [str(above)] if above is not None and above.part is not None else []
    room = max(limit - len(dict.fromkeys(first + last)), 0)
    alike = [a for a in _alike(tree, raw) if a not in first and a not in last][:room]
    return list(dict.fromkeys(first + alike + last))[:limit]


def _alike(tree: RegulationTree, raw: str) -> list[str]:
    """Ids spelled like ``raw``, most alike first (ties in document order)."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(raw)
    scored = []
    for node in tree:
        if node.id == raw:
            continue
        matcher.set_seq1(node.id)
        if (
            matcher.real_quick_ratio() >= SIMILARITY
            and matcher.quick_ratio() >= SIMILARITY
            and (ratio := matcher.ratio()) >= SIMILARITY
        ):
            scored.append((-ratio, node.order, node.id))
    return [node_id for _, _, node_id in sorted(scored)]


def unknown_id(tree: RegulationTree, node_id: str, limit: int = SUGGESTIONS) -> str:
    """The one line that says an id names no unit, with the ids :func:`did_you_mean` suggests."""
    close = did_you_mean(tree, node_id, limit)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no node {node_id!r} in the knowledge base{hint}"
