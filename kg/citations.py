"""Cross-references: every citation in a unit's text, hyperlinked or not, resolved to a node.

Two sources: the page's hyperlinks (``<a class="cfr external" href="...#p-164.502(b)">``),
whose targets the eCFR already resolved, and plain-text citations ("paragraph (a)(1)(i) of this
section", "§§ 164.502 and 164.504", "paragraphs (b)(2) through (b)(4) of this section",
"subpart E of this part"), which are parsed here. Relative citations resolve against the
citing section (or the citing definition: "paragraph (4) of this definition"); a range expands
to every sibling in it; citations of other titles and statutes are kept as external references.
A citation that names no existing node is logged as :class:`Unresolved` and never becomes a
reference, so no reference points at a missing node.

:func:`ids_in` is the other reader of citations: it finds regulation ids in free text (a model's
answer, a case file's gold regulations) and normalises each to a
:class:`~privacy_checklist.kg.ids.RegId`, with no tree and no resolution.
"""

from __future__ import annotations

import itertools
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from privacy_checklist.ingest.ecfr import Link
from privacy_checklist.ingest.markers import continue_path, kinds_of
from privacy_checklist.kg.ids import RegId
from privacy_checklist.kg.tree import RegulationTree

PARTS = ("160", "162", "164")


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossRef:
    """A reference from a node to a node (or to outside text), with the citation's span.

    ``text[start:end]`` of the source node is the citation. ``via`` says how it was found:
    ``link`` (the page's hyperlink), ``text`` (parsed from plain text) or ``range`` (a node
    inside a cited range). ``exact`` is False when the cited paragraph does not exist and the
    reference goes to its nearest existing ancestor. ``relation`` is filled in by the norm
    annotation: ``support`` or ``exception``.
    """

    source: str
    target: str | None
    start: int
    end: int
    text: str
    external: bool = False
    via: str = "text"
    exact: bool = True
    relation: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "target": self.target,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "external": self.external,
            "via": self.via,
            "exact": self.exact,
            "relation": self.relation,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Unresolved:
    """A citation that names no node of the tree, with its place."""

    source: str
    start: int
    end: int
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class FoundId:
    """A regulation id in free text: ``text`` as written at ``start:end``, ``id`` normalised."""

    id: RegId
    start: int
    end: int
    text: str


# --------------------------------------------------------------------------- ids in free text

#: A label as people and models write it: a paragraph marker, or a defined term that may end
#: in one parenthesised abbreviation ("Health maintenance organization (HMO)").
_FREE_LABEL = r"[A-Za-z0-9][A-Za-z0-9 ,'’-]{0,80}?(?:\s*\([A-Za-z0-9][A-Za-z0-9 ,'’-]{0,20}\))?"
ID_IN_TEXT = re.compile(
    rf"(?<![\d.])(?:{'|'.join(PARTS)})\s*\.\s*\d{{3,4}}(?!\d)"
    rf"(?:\s?\(\s*{_FREE_LABEL}\s*\))*"
)


def ids_in(text: str) -> list[FoundId]:
    """Every regulation id of Parts 160, 162 and 164 in a text, in order, normalised:
    ``45 CFR 164.512(f)(1)``, ``§164.512(f)``, ``164.512 (f)( 1 )`` and ``Section 164.502(a)``
    give ``164.512(f)(1)``, ``164.512(f)``, ``164.512(f)(1)`` and ``164.502(a)``. Parts and
    subparts ("Part 164") are not ids of a unit with text, and are not found; nor is anything
    the tree may lack: check a found id against the tree (``RegId.nearest``)."""
    return [
        FoundId(RegId.parse(m.group(0)), m.start(), m.end(), m.group(0))
        for m in ID_IN_TEXT.finditer(text)
    ]


# --------------------------------------------------------------------------- patterns (data)

_LABEL = r"\((?:[a-z]{1,4}|\d{1,3}|[A-Z]{1,2})\)"
_CHAIN = rf"(?:{_LABEL})+"
_SECT = r"(?P<sec>1\d{2}\.\d{1,4}[a-z]?)"
_SEP = r"(?P<sep>,\s*(?:and\s+|or\s+)?|\s+(?:and|or|and/or|through)\s+|\s*[–-]\s*)"
_SUFFIX = (
    r"\s+(?:of|in|under)\s+(?:(?P<this>this\s+(?:section|definition))"
    r"|§\s*(?P<ofsec>1\d{2}\.\d{1,4}[a-z]?)"
    r"|the\s+definitions?\s+of\s+[“\"]?(?P<term>[A-Za-z][A-Za-z ’'-]{1,80}))"
)

PATTERNS: Mapping[str, re.Pattern[str]] = {
    "section": re.compile(rf"§§?\s*(?:45\s+CFR\s+)?{_SECT}(?P<chain>{_CHAIN})?"),
    "cfr45": re.compile(rf"\b45\s+CFR\s+(?:§\s*)?{_SECT}(?P<chain>{_CHAIN})?"),
    "cfr45part": re.compile(r"\b45\s+CFR\s+[Pp]arts?\s+(?P<part>16[024])\b"),
    "paragraph": re.compile(rf"\bparagraphs?\s+(?P<chain>{_CHAIN})"),
    "bare": re.compile(rf"(?<![\w.§$])(?P<sec>16[024]\.\d{{3,4}})(?P<chain>{_CHAIN})?(?![\w.])"),
    "subpart": re.compile(
        r"(?:\b[Pp]art\s+(?P<part0>16[024]),\s+)?\b[Ss]ubparts?\s+(?P<letters>[A-Z](?:(?:,\s*|\s+(?:and|or|through)\s+)[A-Z])*)\b"
        r"(?:\s+of\s+(?:this\s+part|part\s+(?P<part>16[024])))?(?P<tail>\s+of\s+this\s+subchapter)?"
    ),
    "part": re.compile(
        r"\b[Pp]arts?\s+(?P<parts>16[024](?:(?:,\s*|\s+(?:and|or)\s+(?:parts?\s+)?)16[024])*)\b"
        r"(?:\s+of\s+this\s+subchapter)?"
    ),
    "external_cfr": re.compile(
        rf"\b(?P<title>\d{{1,2}})\s+CFR\s+(?:[Pp]arts?\s+)?[\dA-Za-z.]+(?:{_CHAIN})?"
    ),
    "external_usc": re.compile(rf"\b\d{{1,2}}\s+U\.S\.C\.\s+[\dA-Za-z–-]+(?:{_CHAIN})?"),
    "external_act": re.compile(
        r"\bsections?\s+\d[\dA-Za-z()–-]*(?:\s+(?:and|or|through)\s+\d[\dA-Za-z()–-]*)*"
        r"\s+of\s+(?:the\s+)?(?:Social Security Act|Act|PHS Act|Public Health Service Act|ERISA"
        r"|Employee Retirement Income[^,;.]*|Foreign Service Act"
        r"|Pub(?:lic|\.)\s*L(?:aw|\.)\s*\d+[–-]\d+)"
    ),
}
_CONTINUE = re.compile(rf"{_SEP}(?:§\s*)?(?:{_SECT}(?P<chain>{_CHAIN})?|(?P<chain2>{_CHAIN}))")
_SUFFIX_RE = re.compile(_SUFFIX)
_RANGE_SEPS = ("through", "–", "-")


@dataclass(slots=True)
class _Item:
    start: int
    end: int
    section: str | None
    labels: list[str]
    range_from_previous: bool = False
    target: str | None = None
    exact: bool = True
    linked: bool = False
    relative: bool = False


@dataclass(slots=True)
class _Context:
    tree: RegulationTree
    terms: dict[str, list[str]]
    refs: list[CrossRef] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)


def _chain(text: str | None) -> list[str]:
    return re.findall(r"\(([^()]*)\)", text or "")


def link_target(href: str, tree: RegulationTree) -> tuple[str | None, bool, bool]:
    """Resolve a hyperlink's href: (node id or None, external, exact)."""
    parsed = urllib.parse.urlparse(href)
    path, fragment = parsed.path, urllib.parse.unquote(parsed.fragment)
    title = re.search(r"/title-(\d+)", path)
    if not title or title.group(1) != "45":
        return None, True, True
    if fragment.startswith("p-"):
        node_id = fragment[2:]
    elif sec := re.search(r"/section-([\d.]+[a-z]?)", path):
        node_id = sec.group(1)
    elif sub := re.search(r"/part-(\d+)/subpart-([A-Z]+)", path):
        node_id = str(RegId(sub.group(1), subpart=sub.group(2)))
    elif part := re.search(r"/part-(\d+)", path):
        node_id = str(RegId(part.group(1)))
    else:
        return None, False, False
    if node_id in tree:
        return node_id, False, True
    cited = RegId.try_parse(node_id)
    if cited is None:
        return None, False, False
    if cited.part not in PARTS:
        return None, True, True
    target, exact = tree.resolve(cited)
    return target, False, exact


def extract(
    tree: RegulationTree, links: Mapping[str, Sequence[Link]]
) -> tuple[list[CrossRef], list[Unresolved]]:
    """All cross-references of the tree's nodes.

    Args:
        tree: the regulation tree (its nodes' own texts are searched).
        links: the page's hyperlinks by node id, spans into the node's text.

    Returns:
        The references, in document order, and the citations that could not be resolved.
    """
    ctx = _Context(tree, _terms(tree))
    for node in tree:
        if node.text:
            _node_refs(ctx, node.id, node.text, links.get(node.id, ()))
    seen: set[tuple[str, str | None, int, int, str]] = set()
    unique = []
    for ref in ctx.refs:
        key = (ref.source, ref.target, ref.start, ref.end, ref.text)
        if key not in seen:
            seen.add(key)
            unique.append(ref)
    return unique, ctx.unresolved


def citations_in(
    tree: RegulationTree, source: str, text: str, links: Sequence[Link] = ()
) -> tuple[list[CrossRef], list[Unresolved]]:
    """The references of one text read as if it stood at node ``source``.

    Useful for text that is not in the tree (a case narrative quoting the law) and for tests.
    """
    if source not in tree:
        raise KeyError(f"no node {source!r} in the regulation tree")
    ctx = _Context(tree, _terms(tree))
    _node_refs(ctx, source, text, links)
    return ctx.refs, ctx.unresolved


def _terms(tree: RegulationTree) -> dict[str, list[str]]:
    terms: dict[str, list[str]] = {}
    for node in tree:
        if node.kind == "paragraph" and node.label and not kinds_of(node.label):
            terms.setdefault(_term_key(node.label), []).append(node.id)
    return terms


def _term_key(term: str) -> str:
    return re.sub(r"\s+", " ", term.strip(" “”\"'").lower())


def _outside(source: str, start: int, end: int, text: str, *, via: str) -> CrossRef:
    """A citation of text outside 45 CFR (another title, the U.S. Code, a public law)."""
    return CrossRef(
        source=source, target=None, start=start, end=end, text=text, external=True, via=via
    )


def _node_refs(ctx: _Context, source: str, text: str, links: Sequence[Link]) -> None:
    tree = ctx.tree
    link_items: list[tuple[Link, str | None, bool]] = []
    pending: dict[int, CrossRef] = {}
    for link in links:
        if "cfr" in link.css.split():
            target, external, exact = link_target(link.href, tree)
            if external:
                ctx.refs.append(_outside(source, link.start, link.end, link.text, via="link"))
            elif target is None:
                ctx.unresolved.append(
                    Unresolved(
                        source=source,
                        start=link.start,
                        end=link.end,
                        text=link.text,
                        reason=f"link to {link.href} names no node",
                    )
                )
            else:
                # An inexact href names no node (``#p-164.504(a)(4)(ii)(g)`` for "164.504(g)"):
                # the text of the citation may, so that one waits for the text to be parsed.
                ref = CrossRef(
                    source=source,
                    target=target,
                    start=link.start,
                    end=link.end,
                    text=link.text,
                    via="link",
                    exact=exact,
                )
                if exact:
                    ctx.refs.append(ref)
                else:
                    pending[link.start] = ref
            link_items.append((link, target, exact))
        elif link.css.split()[0:1] in (["usc"], ["publ"]):
            ctx.refs.append(_outside(source, link.start, link.end, link.text, via="link"))
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    def overlaps_link(start: int, end: int) -> tuple[Link, str | None, bool] | None:
        return next(
            (item for item in link_items if start < item[0].end and end > item[0].start), None
        )

    for kind in (
        "external_act",
        "external_usc",
        "cfr45",
        "cfr45part",
        "external_cfr",
        "paragraph",
        "section",
        "subpart",
        "part",
        "bare",
    ):
        for m in PATTERNS[kind].finditer(text):
            if not free(m.start(), m.end()):
                continue
            if kind.startswith("external"):
                if kind == "external_cfr" and m.group("title") == "45":
                    continue
                taken.append((m.start(), m.end()))
                if not any(k.start < m.end() and m.start() < k.end for k in links):
                    ctx.refs.append(_outside(source, m.start(), m.end(), m.group(0), via="text"))
                continue
            end = _phrase(ctx, kind, m, source, text, overlaps_link, pending)
            taken.append((m.start(), end))
    ctx.refs.extend(pending.values())


def _phrase(
    ctx: _Context,
    kind: str,
    m: re.Match[str],
    source: str,
    text: str,
    overlaps_link: Callable[[int, int], tuple[Link, str | None, bool] | None],
    pending: dict[int, CrossRef],
) -> int:
    """Parse one citation phrase starting at match ``m``; emit its references; return its end."""
    tree = ctx.tree
    if kind in ("subpart", "part", "cfr45part"):
        targets: list[str] = []
        if kind == "subpart":
            part = m.group("part") or m.group("part0") or _part_of(tree, source)
            letters = re.findall(r"[A-Z]", m.group("letters"))
            if " through " in m.group("letters") and len(letters) == 2:
                letters = [chr(c) for c in range(ord(letters[0]), ord(letters[1]) + 1)]
            targets = [str(RegId(part, subpart=letter)) for letter in letters]
        elif kind == "part":
            targets = [str(RegId(p)) for p in re.findall(r"16[024]", m.group("parts"))]
        else:
            targets = [str(RegId(m.group("part")))]
        for target in targets:
            if overlaps_link(m.start(), m.end()):
                continue
            if target in tree:
                ctx.refs.append(
                    CrossRef(
                        source=source,
                        target=target,
                        start=m.start(),
                        end=m.end(),
                        text=m.group(0),
                        via="text",
                    )
                )
            else:
                ctx.unresolved.append(
                    Unresolved(
                        source=source,
                        start=m.start(),
                        end=m.end(),
                        text=m.group(0),
                        reason=f"no {target}",
                    )
                )
        return m.end()

    items = [
        _Item(
            m.start(),
            m.end(),
            m.group("sec") if "sec" in m.groupdict() else None,
            _chain(m.group("chain")),
            relative=kind == "paragraph",
        )
    ]
    pos = m.end()
    while True:
        c = _CONTINUE.match(text, pos)
        if not c:
            break
        sep = c.group("sep").strip().rstrip(",").strip()
        section = c.group("sec")
        prev = items[-1]
        if section:
            item = _Item(c.start("sec"), c.end(), section, _chain(c.group("chain")))
        else:
            chain = _chain(c.group("chain2"))
            item = _Item(
                c.start("chain2"),
                c.end(),
                prev.section,
                continue_path(prev.labels, chain),
                relative=prev.relative,
            )
        item.range_from_previous = sep in _RANGE_SEPS or sep.endswith("through")
        items.append(item)
        pos = c.end()
    suffix = _SUFFIX_RE.match(text, pos)
    # Where a relative citation ("paragraph (a)(1)") is read from, most likely first.
    bases: list[tuple[str, list[str]]] = []
    own = tree.section_of(source)
    own_section = own.id if own is not None else None
    own_definitions = [
        d for d in (_definition_of(tree, source), _layout_definition_of(tree, source)) if d
    ]
    end = pos
    if suffix and kind == "paragraph":
        end = suffix.end()
        if suffix.group("this") and "definition" in suffix.group("this"):
            bases = [_base(d) for d in own_definitions]
        elif suffix.group("ofsec"):
            bases = [(suffix.group("ofsec"), [])]
        elif suffix.group("term"):
            named = _find_term(ctx, suffix.group("term"), source)
            if named:
                end = suffix.start("term") + len(tree[named].label or "")
                bases = [_base(named)]
        else:
            bases = [(own_section, [])] if own_section else []
    else:
        bases = [(own_section, [])] if own_section else []
        bases += [_base(d) for d in own_definitions]
    phrase_text = text[m.start() : end]
    for item in items:
        link = overlaps_link(item.start, item.end)
        if link is not None and link[0].start in pending:
            text_target = _resolve_item(tree, item, bases)
            if text_target is not None and text_target[1]:
                stale = pending.pop(link[0].start)
                item.target, item.exact = text_target
                ctx.refs.append(
                    CrossRef(
                        source=source,
                        target=item.target,
                        start=stale.start,
                        end=stale.end,
                        text=stale.text,
                        via="link",
                    )
                )
                continue
        if link is not None:
            item.linked = True
            item.target, item.exact = link[1], link[2]
            if item.target and item.target in tree and "(" in item.target:
                item.section, item.labels = _base(item.target)
            continue
        found = _candidates(tree, item, bases)
        if not found:
            cited = "".join(f"({x})" for x in item.labels)
            where = (
                ", ".join(sec + "".join(f"({x})" for x in pre) for sec, pre in bases if sec)
                if item.relative
                else item.section
            )
            ctx.unresolved.append(
                Unresolved(
                    source=source,
                    start=item.start,
                    end=item.end,
                    text=phrase_text,
                    reason=f"no node {cited} in {where or '?'}",
                )
            )
            continue
        item.target, item.exact = found[0]
        ctx.refs.append(
            CrossRef(
                source=source,
                target=item.target,
                start=item.start,
                end=item.end,
                text=text[item.start : item.end],
                via="text",
                exact=item.exact,
            )
        )
    for before, after in itertools.pairwise(items):
        if (
            after.range_from_previous
            and before.target
            and after.target
            and before.exact
            and after.exact
        ):
            _expand_range(ctx, source, before, after, text)
    return end


def _candidates(
    tree: RegulationTree, item: _Item, bases: Sequence[tuple[str | None, list[str]]]
) -> list[tuple[str, bool]]:
    """Nodes an item can name, exact ones first: relative items are tried against each base."""
    tries = (
        [(sec, [*pre, *item.labels]) for sec, pre in bases]
        if item.relative
        else [(item.section, item.labels)]
    )
    found: list[tuple[str, bool]] = []
    for section, labels in tries:
        if not section:
            continue
        target, exact = tree.resolve_labels(section, labels)
        if target is not None and (exact or target != section or not labels):
            found.append((target, exact))
    found.sort(key=lambda hit: not hit[1])
    return found


def _resolve_item(
    tree: RegulationTree, item: _Item, bases: Sequence[tuple[str | None, list[str]]]
) -> tuple[str, bool] | None:
    found = _candidates(tree, item, bases)
    return found[0] if found else None


def _expand_range(ctx: _Context, source: str, first: _Item, last: _Item, text: str) -> None:
    tree = ctx.tree
    a, b = tree[first.target], tree[last.target]  # type: ignore[index]
    if a.parent != b.parent or a.parent is None:
        return
    siblings = list(tree[a.parent].children)
    i, j = siblings.index(a.id), siblings.index(b.id)
    span_text = text[first.start : last.end]
    for node_id in siblings[i + 1 : j]:
        ctx.refs.append(
            CrossRef(
                source=source,
                target=node_id,
                start=first.start,
                end=last.end,
                text=span_text,
                via="range",
            )
        )


def _base(node_id: str) -> tuple[str, list[str]]:
    """A paragraph's section and labels: where a relative citation in it is read from (a unit
    above section level is its own base, with no labels)."""
    found = RegId.parse(node_id)
    return found.section or str(found), list(found.labels)


def _part_of(tree: RegulationTree, node_id: str) -> str:
    part = tree.ancestor_of_kind(node_id, "part")
    return (RegId.parse(part.id).part or "164") if part else "164"


def _definition_of(tree: RegulationTree, node_id: str) -> str | None:
    """The definition (a paragraph labelled with a term) that a node belongs to."""
    for node in reversed(tree.path(node_id)):
        if node.kind == "paragraph" and node.label and not kinds_of(node.label):
            return node.id
    return None


def _layout_definition_of(tree: RegulationTree, node_id: str) -> str | None:
    """The definition a node sits in by the page's layout: the last term before it, in order.

    It differs from :func:`_definition_of` where an id names the wrong term, as
    ``160.103(ANSI)(1)``, which is the first paragraph of "Business associate".
    """
    section = tree.section_of(node_id)
    if section is None:
        return None
    last: str | None = None
    for node in sorted(tree.descendants(section.id), key=lambda n: n.order):
        if node.id == node_id:
            return last
        if node.label and not kinds_of(node.label):
            last = node.id
    return None


def _find_term(ctx: _Context, phrase: str, source: str) -> str | None:
    """The definition named at the start of ``phrase`` (longest term first)."""
    words = _term_key(phrase).split()
    own = ctx.tree.section_of(source)
    section = own.id if own is not None else None
    for n in range(min(len(words), 8), 0, -1):
        candidates = ctx.terms.get(" ".join(words[:n]))
        if candidates:
            same = [c for c in candidates if RegId.parse(c).section == section]
            return (same or candidates)[0]
    return None


def refs_by(refs: Iterable[CrossRef], key: str) -> dict[str, list[CrossRef]]:
    """Index references by ``source`` or ``target``."""
    out: dict[str, list[CrossRef]] = {}
    for ref in refs:
        value = getattr(ref, key)
        if value is not None:
            out.setdefault(value, []).append(ref)
    return out
