"""The regulation tree: HIPAA → parts → subparts → sections (and the appendix) → paragraphs.

Every paragraph id of the eCFR pages is exactly one :class:`Node`. A paragraph hangs under the
nearest existing ancestor its id names (``160.103(Business associate)(1)(i)`` has no ``(1)``,
so it hangs under ``160.103(Business associate)``); every such repair, and every place where
the page's layout disagrees with its ids, is recorded as an :class:`Anomaly`. Ids are read with
:class:`~privacy_checklist.kg.ids.RegId`; searching the tree by id, heading or words, and the ids
to suggest for one that names no node, are :mod:`privacy_checklist.kg.search`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from privacy_checklist.ingest.ecfr import PartPage, RawNode
from privacy_checklist.ingest.markers import label_kind_ok
from privacy_checklist.kg.ids import ROOT, RegId

ROOT_ID = ROOT


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One regulation unit, holding its own text (not its children's)."""

    id: str
    kind: str  # root, part, subpart, section, appendix or paragraph
    parent: str | None
    title: str | None
    text: str
    label: str | None = None
    depth: int = 0
    order: int = 0
    children: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def heading_line(self) -> str:
        """How the unit is named in a path or a full specification."""
        if self.kind == "root":
            return "HIPAA (45 CFR Parts 160, 162 and 164)"
        if self.kind in ("part", "subpart", "appendix"):
            name = f"Subpart {RegId.parse(self.id).subpart}" if self.kind == "subpart" else self.id
            return name + (f" — {self.title}" if self.title else "")
        if self.kind == "section":
            return f"§ {self.id} {self.title or ''}".rstrip()
        if self.label and self.label.isalnum() and len(self.label) <= 5:
            return f"({self.label})"
        return self.label or self.id


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Something in the page that the tree had to repair or that looks wrong, with its place."""

    node: str
    kind: str
    detail: str


@dataclass(slots=True)
class RegulationTree:
    """The nodes by id, in document order, with navigation helpers."""

    nodes: dict[str, Node]
    anomalies: list[Anomaly] = field(default_factory=list)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __getitem__(self, node_id: str) -> Node:
        try:
            return self.nodes[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id!r} in the regulation tree") from None

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, node_id: str) -> Node | None:
        return self.nodes.get(node_id)

    def children(self, node_id: str) -> list[Node]:
        return [self.nodes[c] for c in self[node_id].children]

    def path(self, node_id: str) -> list[Node]:
        """The nodes from the root down to ``node_id``, both included."""
        out = [self[node_id]]
        while out[-1].parent is not None:
            out.append(self.nodes[out[-1].parent])
        return out[::-1]

    def is_ancestor(self, ancestor: str, node_id: str) -> bool:
        """True when ``ancestor`` is ``node_id`` or lies on its path from the root."""
        current: str | None = node_id
        while current is not None:
            if current == ancestor:
                return True
            current = self.nodes[current].parent if current in self.nodes else None
        return False

    def descendants(self, node_id: str) -> Iterator[Node]:
        """The nodes under ``node_id`` in document order (``node_id`` excluded)."""
        for child in self[node_id].children:
            yield self.nodes[child]
            yield from self.descendants(child)

    def section_of(self, node_id: str) -> Node | None:
        """The section (or appendix) a node belongs to; None above section level.

        Raises:
            KeyError: no node ``node_id``.
        """
        node = self[node_id]
        if node.kind == "appendix":
            return node
        section = RegId.parse(node_id).section
        return self.nodes.get(section) if section is not None else None

    def ancestor_of_kind(self, node_id: str, kind: str) -> Node | None:
        return next((n for n in reversed(self.path(node_id)) if n.kind == kind), None)

    def leaves(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.is_leaf]

    def full_specification(self, node_id: str) -> str:
        """The texts from the root down to the node, one line each: what an annotator reads.

        The paper feeds this to its annotator, so that "(i) To the individual;" is read with
        "A covered entity is permitted to use or disclose protected health information as
        follows:" above it.
        """
        lines = []
        for depth, node in enumerate(self.path(node_id)):
            line = node.heading_line()
            if node.kind == "paragraph" and node.title and node.title not in node.text[:80]:
                line = f"{line} {node.title}"
            if node.text and node.kind != "root":
                line = f"{line} {node.text}" if node.kind == "paragraph" else f"{line}\n{node.text}"
            lines.append("  " * max(depth - 1, 0) + line)
        return "\n".join(lines[1:]) if len(lines) > 1 else lines[0]

    def subtree_text(self, node_id: str) -> str:
        """The node's text followed by each descendant's marker and text, one line each."""
        lines = [self[node_id].text]
        base = self[node_id].depth
        for node in self.descendants(node_id):
            lines.append("  " * (node.depth - base) + f"{node.heading_line()} {node.text}".strip())
        return "\n".join(line for line in lines if line)

    def resolve(self, wanted: RegId) -> tuple[str | None, bool]:
        """The node an id names, or its nearest existing ancestor within its section.

        Returns:
            (node id or None, exact) where ``exact`` is False when only an ancestor at or below
            the section exists; None when the section does not exist. An id above section level
            (a part, subpart or appendix) resolves only to itself.
        """
        if wanted.section is None:
            return (str(wanted), True) if str(wanted) in self.nodes else (None, False)
        if wanted.section not in self.nodes:
            return None, False
        return nearest_existing(self.nodes, wanted)

    def resolve_labels(self, section: str, labels: Sequence[str]) -> tuple[str | None, bool]:
        """:meth:`resolve` for a section's id and a label path (a unit that is no section,
        as the appendix, holds no paragraphs: it is its own nearest ancestor)."""
        if section not in self.nodes:
            return None, False
        holder = RegId.parse(section)
        if holder.section is None:
            return section, not labels
        return nearest_existing(self.nodes, holder.child(*labels))


def nearest_existing(existing: Container[str], wanted: RegId) -> tuple[str, bool]:
    """``wanted`` if it exists, else its nearest existing ancestor, its section at worst (even
    when ``existing`` lacks it); the flag says whether ``wanted`` itself exists."""
    found = wanted.nearest(existing)
    if found is not None and found.section is not None:
        return str(found), found == wanted
    return wanted.section or str(wanted), not wanted.labels


def build_tree(pages: Iterable[PartPage]) -> RegulationTree:
    """Assemble the tree from parsed part pages (in the order given)."""
    raw: dict[str, RawNode] = {}
    parents: dict[str, str] = {}
    order: list[str] = []
    anomalies: list[Anomaly] = []
    for page in pages:
        indent_stack: list[RawNode] = []  # for flat paragraphs: the layout's own nesting
        for node in page.nodes:
            if node.id in raw:
                raise ValueError(f"the id {node.id!r} occurs in two pages; pass each part once")
            raw[node.id] = node
            order.append(node.id)
            if node.kind == "part":
                parents[node.id] = ROOT_ID
                continue
            if node.kind != "paragraph":
                parents[node.id] = node.dom_parent or ROOT_ID
                continue
            paragraph = RegId.parse(node.id)
            labels = list(paragraph.labels)
            above = paragraph.parent
            if above is None or paragraph.section is None:
                raise ValueError(f"the paragraph id {node.id!r} names no section")
            parent, exact = nearest_existing(raw, above)
            parents[node.id] = parent
            if not exact:
                anomalies.append(
                    Anomaly(node.id, "skipped-level", f"no {above}; attached to {parent}")
                )
            if not node.term and labels and not node.flat and not label_kind_ok(labels):
                anomalies.append(
                    Anomaly(
                        node.id, "marker-kind", f"labels {labels} do not follow a, 1, i, A, 1, i"
                    )
                )
            layout_parent = node.dom_parent
            if node.flat:
                while indent_stack and (indent_stack[-1].indent or 0) >= (node.indent or 0):
                    indent_stack.pop()
                layout_parent = indent_stack[-1].id if indent_stack else node.dom_parent
                indent_stack.append(node)
            if layout_parent != parent and exact:
                anomalies.append(
                    Anomaly(
                        node.id,
                        "layout-mismatch",
                        f"its id places it under {parent}, the page's layout under {layout_parent}",
                    )
                )
    children: dict[str, list[str]] = {ROOT_ID: []}
    for node_id in order:
        children.setdefault(node_id, [])
        children.setdefault(parents[node_id], []).append(node_id)
    nodes: dict[str, Node] = {
        ROOT_ID: Node(
            id=ROOT_ID,
            kind="root",
            parent=None,
            title="HIPAA Administrative Simplification",
            text="",
            children=tuple(children[ROOT_ID]),
        )
    }
    depth = {ROOT_ID: 0}
    for index, node_id in enumerate(order, start=1):
        r = raw[node_id]
        depth[node_id] = depth[parents[node_id]] + 1
        nodes[node_id] = Node(
            id=node_id,
            kind=r.kind,
            parent=parents[node_id],
            title=r.title,
            text=r.text,
            label=r.label,
            depth=depth[node_id],
            order=index,
            children=tuple(children[node_id]),
            notes=tuple(r.notes),
        )
    return RegulationTree(nodes, anomalies)
