"""The definitions dictionary: every defined term, where it is defined, and where it applies.

A definitions section says in its first sentence what it governs ("the following definitions
apply to this subchapter", "As used in this subpart"); that is each term's scope. The same term
can be defined twice with different scopes ("Individual", "Required by law" ...):
:meth:`Definitions.define` gives the one in force at a node, the narrowest scope first.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from privacy_checklist.ingest.markers import kinds_of
from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.tree import ROOT_ID, RegulationTree

#: How a definitions section's opening names its scope, first match wins.
SCOPE_CUES: tuple[tuple[str, str], ...] = (
    (r"\bthis subchapter\b", "root"),
    (r"\bthis subpart\b", "subpart"),
    (r"\bthis part\b", "part"),
    (r"\bthis section\b", "section"),
)
#: Defined terms matched only with the regulation's capitals ("the Act", "a State").
CASE_SENSITIVE_TERMS = frozenset({"Act", "State", "Secretary", "Respondent", "Party"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Definition:
    """A defined term: its paragraph, its scope (a node id) and its full text."""

    term: str
    node: str
    scope: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"term": self.term, "node": self.node, "scope": self.scope, "text": self.text}


@dataclass(frozen=True, slots=True)
class TermUse:
    """A defined term used in a text, with its span and the definition in force there."""

    term: str
    start: int
    end: int
    definition: Definition


def term_key(term: str) -> str:
    """Case- and space-folded form of a term, quotes and a trailing colon removed."""
    return re.sub(r"\s+", " ", term.strip().strip("“”\"':").strip()).lower()


def variants(term: str) -> list[str]:
    """The forms a term takes in running text: itself, its plural, an acronym in parentheses."""
    forms = [term]
    acronym = re.match(r"^(.*?)\s*\(([A-Z]{2,})\)$", term)
    if acronym:
        forms = [acronym.group(1), acronym.group(2)]
    out: list[str] = []
    for form in forms:
        out.append(form)
        if form.isupper():
            out.append(form + "s")
        elif re.search(r"[^aeiou]y$", form):
            out.append(form[:-1] + "ies")
        elif re.search(r"(ss|x|ch|sh)$", form):
            out.append(form + "es")
        elif form.endswith("s"):
            continue  # already plural: "Psychotherapy notes"
        else:
            out.append(form + "s")
    return out


def _scope_of(tree: RegulationTree, section_id: str) -> str:
    return _scope_from_text(tree, section_id, tree[section_id].text.split("\n")[0])


def is_term_label(label: str | None) -> bool:
    return bool(label) and not kinds_of(label or "")


class Definitions:
    """All definitions of the tree, looked up by term and place."""

    def __init__(self, items: Iterable[Definition]) -> None:
        self.items: list[Definition] = list(items)
        self._by_key: dict[str, list[Definition]] = {}
        for item in self.items:
            for form in variants(item.term):
                self._by_key.setdefault(term_key(form), [])
                if item not in self._by_key[term_key(form)]:
                    self._by_key[term_key(form)].append(item)
        self._pattern: re.Pattern[str] | None = None
        self._pattern_cs: re.Pattern[str] | None = None

    def __iter__(self) -> Iterator[Definition]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def by_section(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in self.items:
            section = RegId.parse(item.node).section or item.node
            counts[section] = counts.get(section, 0) + 1
        return counts

    def candidates(self, term: str) -> list[Definition]:
        return list(self._by_key.get(term_key(term), []))

    def define(self, term: str, at: str | None, tree: RegulationTree) -> Definition:
        """The definition of ``term`` in force at node ``at`` (narrowest scope first).

        Args:
            term: the term as written ("covered entities" works: plurals are folded).
            at: a node id; None gives the broadest definition.
            tree: the tree, to test which scopes contain ``at``.

        Raises:
            KeyError: the term is not defined, or not defined for ``at``; the message lists
                the nearest defined terms or the scopes where it is defined.
        """
        found = self.candidates(term)
        if not found:
            close = difflib.get_close_matches(term_key(term), list(self._by_key), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise KeyError(f"{term!r} is not a defined term{hint}")
        if at is None:
            return min(found, key=lambda d: tree[d.scope].depth)
        if at not in tree:
            from privacy_checklist.kg.search import unknown_id

            raise KeyError(unknown_id(tree, at))
        in_force = [d for d in found if tree.is_ancestor(d.scope, at)]
        if not in_force:
            scopes = ", ".join(sorted({d.scope for d in found}))
            raise KeyError(f"{term!r} is defined for {scopes}, which does not include {at}")
        return max(in_force, key=lambda d: tree[d.scope].depth)

    def _patterns(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        if self._pattern is None or self._pattern_cs is None:
            loose: set[str] = set()
            strict: set[str] = set()
            for item in self.items:
                for form in variants(item.term):
                    exact = form.isupper() or form.rstrip("s") in CASE_SENSITIVE_TERMS
                    (strict if exact else loose).add(form)

            def build(forms: set[str], flags: int) -> re.Pattern[str]:
                ordered = sorted(forms, key=len, reverse=True)
                body = "|".join(re.escape(f) for f in ordered) or r"(?!x)x"
                return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", flags)

            self._pattern = build(loose, re.I)
            self._pattern_cs = build(strict, 0)
        return self._pattern, self._pattern_cs

    def uses(self, text: str, at: str, tree: RegulationTree) -> list[TermUse]:
        """Defined terms used in ``text`` (read at node ``at``), longest match first."""
        loose, strict = self._patterns()
        found: list[tuple[int, int]] = []
        for pattern in (loose, strict):
            for m in pattern.finditer(text):
                if all(m.end() <= a or m.start() >= b for a, b in found):
                    found.append((m.start(), m.end()))
        out: list[TermUse] = []
        for start, end in sorted(found):
            try:
                definition = self.define(text[start:end], at, tree)
            except KeyError:
                continue
            if definition.node == at or tree.is_ancestor(definition.node, at):
                continue  # a definition does not use itself
            out.append(TermUse(definition.term, start, end, definition))
        return out


#: What a term-labelled paragraph says when it defines its term.
DEFINING_CUES = re.compile(
    r"\b(?:means|mean|stands for|is defined|includes|has the meaning|refers to)\b"
)


def term_forms(label: str, text: str) -> list[str]:
    """Every term a definition paragraph defines, its label first.

    "Violation or violate" defines two terms; "Health maintenance organization (HMO)" and
    "Standard setting organization (SSO) means" define an acronym too; "ANSI stands for the
    American National Standards Institute" defines the name an acronym stands for.
    """
    label = label.strip().rstrip(":").strip()
    forms: list[str] = []
    acronym = re.match(r"^(.*?)\s*\(([A-Z]{2,})\)$", label)
    base = acronym.group(1) if acronym else label
    forms.extend(p.strip() for p in re.split(r"\s+or\s+", base) if p.strip())
    if acronym:
        forms.append(acronym.group(2))
    after = text[len(label) :] if text.startswith(label) else ""
    inline = re.match(r"^:?\s*\(([A-Z]{2,})\)", after)
    if inline:
        forms.append(inline.group(1))
    if label.isupper():
        expansion = re.match(
            r"^:?\s*(?:means|stands for)\s+(?:the\s+)?([A-Z][^.;:]{3,80}?)\.?$", after.strip()
        )
        if expansion:
            forms.append(expansion.group(1).strip())
    unique: list[str] = []
    for form in forms:
        if term_key(form) not in {term_key(u) for u in unique}:
            unique.append(form)
    return unique


def _is_definition(tree: RegulationTree, node_id: str) -> bool:
    node = tree[node_id]
    section = tree.section_of(node_id)
    parent = tree[node.parent] if node.parent else None
    in_definitions = any(
        (n.title or "").lower().startswith("definition") for n in (section, parent) if n is not None
    )
    return in_definitions or bool(DEFINING_CUES.search(node.text[:300]))


def _scope_for(tree: RegulationTree, node_id: str, cache: dict[str, str]) -> str:
    """The scope a definition's parent (or section) declares in its opening words."""
    node = tree[node_id]
    holder = node.parent or ROOT_ID
    if holder not in cache:
        opening = tree[holder].text.split("\n")[0]
        if tree[holder].kind == "section" or not any(
            re.search(c, opening, re.I) for c, _ in SCOPE_CUES
        ):
            section = tree.section_of(node_id)
            cache[holder] = _scope_of(tree, section.id) if section else ROOT_ID
        else:
            cache[holder] = _scope_from_text(tree, holder, opening)
    return cache[holder]


def _scope_from_text(tree: RegulationTree, at: str, opening: str) -> str:
    for cue, level in SCOPE_CUES:
        if re.search(cue, opening, re.I):
            if level == "root":
                return ROOT_ID
            if level == "section":
                section = tree.section_of(at)
                return section.id if section else at
            node = tree.ancestor_of_kind(at, level)
            if node is not None:
                return node.id
    part = tree.ancestor_of_kind(at, "part")
    return part.id if part is not None else ROOT_ID


def definition_text(tree: RegulationTree, term_node: str) -> str:
    """A definition's full text: the term's paragraph and the paragraphs that follow it.

    Read in document order, up to the next defined term or the end of the list that holds
    it, so that a paragraph whose id names the wrong term (``160.103(ANSI)(1)``, the first
    paragraph of "Business associate") is read where the page shows it.
    """
    node = tree[term_node]
    holder = node.parent or ROOT_ID
    following = sorted(
        (n for n in tree.descendants(holder) if n.order > node.order), key=lambda n: n.order
    )
    lines = [node.text]
    for other in following:
        if is_term_label(other.label):
            break
        labels = RegId.parse(other.id).labels
        terms = [i for i, label in enumerate(labels) if is_term_label(label)]
        level = len(labels) - (terms[-1] + 1 if terms else 0)
        lines.append("  " * level + f"({other.label}) {other.text}".rstrip())
    return "\n".join(line for line in lines if line)


def extract_definitions(tree: RegulationTree) -> Definitions:
    """Every term defined by a term-labelled paragraph, one :class:`Definition` per term form."""
    items: list[Definition] = []
    scopes: dict[str, str] = {}
    for node in tree:
        if node.kind != "paragraph" or not is_term_label(node.label):
            continue
        if not _is_definition(tree, node.id):
            continue
        scope = _scope_for(tree, node.id, scopes)
        text = definition_text(tree, node.id)
        for form in term_forms(node.label or "", node.text):
            items.append(Definition(term=form, node=node.id, scope=scope, text=text))
    return Definitions(items)
