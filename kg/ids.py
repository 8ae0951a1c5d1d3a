"""Regulation ids: one value type for every unit of 45 CFR Parts 160, 162 and 164.

The tree's ids are the eCFR's own: ``HIPAA`` (the root), ``Part 164``, ``Part 164 Subpart E``
(``Part 162 Subpart B-C`` for a reserved range), ``Appendix A to Subpart C of Part 164``,
``164.502`` (a section) and ``164.502(a)(1)(i)`` (a paragraph: its section, then one label in
parentheses per level). A definition's paragraphs are labelled by the term, which may hold
parentheses of its own: ``160.103(Health maintenance organization (HMO))``.

:class:`RegId` reads those ids and the spellings people and models write (``45 CFR
164.512(f)(1)``, ``§ 164.512(f)``, ``Section 164.502(a)``, ``164.512 (f)( 1 )``, ``part 164``),
renders the canonical id (``str``), and answers what an id alone can tell: its part, section,
labels, parent, whether it lies under another id, and its nearest existing ancestor among a
tree's ids. What only the tree knows, such as the subpart a section sits in, stays with
:class:`~privacy_checklist.kg.tree.RegulationTree`. Finding ids in free text is
:func:`privacy_checklist.kg.citations.ids_in`.

The labels are split by :func:`privacy_checklist.ingest.ids.split_labels`, which the eCFR page
reader also uses for the page's own ids: ``ingest/`` is left of ``kg/`` and cannot import this
type, so the one splitter lives there and this type builds on it.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import lru_cache

from privacy_checklist.ingest.ids import split_labels

ROOT = "HIPAA"
EXAMPLES = "164.502(a)(1)(i), 45 CFR 164.512(f), § 164.502, Part 164, Part 164 Subpart E"

_SECTION = re.compile(r"(\d{1,3})\.(\d{1,4}[a-z]?)")
_SUBPART = r"[A-Z](?:[-–][A-Z])?"
_CFR = r"(?:45\s*C\.?\s*F\.?\s*R\.?\s*)?"
_PART_RE = re.compile(
    rf"{_CFR}(?:[Pp]art|PART)\s*(?P<part>\d{{1,3}})"
    rf"(?:,?\s*(?:[Ss]ubpart|SUBPART)\s*(?P<subpart>{_SUBPART}))?"
)
_SUBPART_OF_RE = re.compile(
    rf"{_CFR}(?:[Ss]ubpart|SUBPART)\s*(?P<subpart>{_SUBPART})\s+of\s+(?:[Pp]art|PART)\s*(?P<part>\d{{1,3}})"
)
_APPENDIX_RE = re.compile(
    rf"{_CFR}(?:[Aa]ppendix|APPENDIX)\s+(?P<appendix>[A-Z])\s+to\s+(?:[Ss]ubpart|SUBPART)\s+"
    rf"(?P<subpart>{_SUBPART})\s+of\s+(?:[Pp]art|PART)\s*(?P<part>\d{{1,3}})"
)
_SECTION_RE = re.compile(
    rf"{_CFR}(?:§§?|[Ss]ections?|SECTIONS?|[Ss]ecs?\.)?\s*"
    r"(?P<part>\d{1,3})\s*\.\s*(?P<section>\d{1,4}[a-z]?)(?P<rest>.*)",
    re.DOTALL,
)
_BETWEEN = re.compile(r"\)\s+\(")  # "164.512 (f) (1)": space between labels


@dataclass(frozen=True, slots=True)
class RegId:
    """One regulation id, as parts: build it with keywords or :meth:`parse` it.

    ``part`` is "164" (None only for the root); ``section`` "164.502"; ``labels`` the paragraph
    labels below the section, outermost first; ``subpart`` "E" (with ``appendix`` "A" for the
    appendix to a subpart). A section id does not name its subpart: ``RegId.parse("164.502")``
    has ``subpart`` None.
    """

    part: str | None = None
    section: str | None = None
    labels: tuple[str, ...] = ()
    subpart: str | None = None
    appendix: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.labels, list):  # a list from a caller: keep the value hashable
            object.__setattr__(self, "labels", tuple(self.labels))
        problem = None
        if self.part is None and (self.section or self.labels or self.subpart or self.appendix):
            problem = "a section, subpart or appendix needs its part"
        elif self.section is not None and (
            not _SECTION.fullmatch(self.section) or self.section.split(".")[0] != self.part
        ):
            problem = f"section {self.section!r} is not a section number of part {self.part}"
        elif self.section is not None and (self.subpart or self.appendix):
            problem = "an id names a section or a subpart, not both"
        elif self.labels and self.section is None:
            problem = "paragraph labels need a section"
        elif self.appendix and not self.subpart:
            problem = "an appendix is the appendix to a subpart"
        elif any(not isinstance(label, str) or not label.strip() for label in self.labels):
            problem = f"empty paragraph label in {self.labels!r}"
        if problem:
            raise ValueError(f"not a regulation id: {problem} (ids look like {EXAMPLES})")

    # ------------------------------------------------------------------ building
    @classmethod
    def parse(cls, text: str) -> RegId:
        """An id from any of its spellings (see the module docstring).

        Raises:
            ValueError: ``text`` is not a regulation id; the message shows what ids look like.
        """
        if not isinstance(text, str):
            raise ValueError(f"a regulation id is text, not {type(text).__name__}")
        return _parse(text)

    @classmethod
    def try_parse(cls, text: str) -> RegId | None:
        """:meth:`parse`, or None for text that is not a regulation id."""
        try:
            return cls.parse(text)
        except ValueError:
            return None

    @classmethod
    def in_section(cls, section: str, labels: Iterable[str] = ()) -> RegId:
        """The id of ``section`` ("164.502") or of its paragraph ``labels`` (["a", "1"])."""
        return cls(section.split(".")[0], section, tuple(labels))

    def child(self, *labels: str) -> RegId:
        """The paragraph ``labels`` below this section or paragraph."""
        if self.section is None:
            raise ValueError(f"{self} holds no paragraphs: only a section or paragraph does")
        return RegId(self.part, self.section, (*self.labels, *labels))

    # ------------------------------------------------------------------ reading
    @property
    def kind(self) -> str:
        """root, part, subpart, appendix, section or paragraph, as the id names it (the same
        as the tree's ``Node.kind``)."""
        if self.part is None:
            return "root"
        if self.section is not None:
            return "paragraph" if self.labels else "section"
        if self.appendix is not None:
            return "appendix"
        return "subpart" if self.subpart is not None else "part"

    @property
    def label(self) -> str | None:
        """The last label (``i`` of ``164.502(a)(1)(i)``); None above paragraph level."""
        return self.labels[-1] if self.labels else None

    @property
    def parent(self) -> RegId | None:
        """The id one level up as the id itself names it: a paragraph's parent paragraph or
        section, a section's or subpart's part, an appendix's subpart, a part's root; None for
        the root. (The tree hangs a section under its subpart, which a section id does not name:
        ask the tree for that.)"""
        if self.labels:
            return RegId(self.part, self.section, self.labels[:-1])
        if self.appendix is not None:
            return RegId(self.part, subpart=self.subpart)
        if self.section is not None or self.subpart is not None:
            return RegId(self.part)
        return RegId() if self.part is not None else None

    @property
    def ancestors(self) -> tuple[RegId, ...]:
        """The ids above this one, nearest first, down to the root."""
        out: list[RegId] = []
        up = self.parent
        while up is not None:
            out.append(up)
            up = up.parent
        return tuple(out)

    def is_under(self, other: RegId) -> bool:
        """True when this id is ``other`` or names a unit inside it (by the ids alone):
        ``164.512(f)(1)(ii)`` is under ``164.512(f)``, ``164.512`` and ``Part 164``."""
        if other.part is None:  # the root holds everything
            return True
        if self.part != other.part:
            return False
        if other.section is not None:
            n = len(other.labels)
            return self.section == other.section and self.labels[:n] == other.labels
        if other.appendix is not None:
            return self == other
        if other.subpart is not None:  # the subpart itself or its appendix
            return self.section is None and self.subpart == other.subpart
        return True  # everything of the part

    def nearest(self, existing: Container[str]) -> RegId | None:
        """This id if ``existing`` holds it, else its nearest ancestor that ``existing`` holds
        (``164.502(a)(1)(ix)`` → ``164.502(a)(1)``); None when none is there.

        ``existing`` is anything that answers ``in`` for id strings: a tree, its ``nodes``, a
        set of ids.
        """
        for candidate in (self, *self.ancestors):
            if str(candidate) in existing:
                return candidate
        return None

    # ------------------------------------------------------------------ rendering
    def __str__(self) -> str:
        if self.part is None:
            return ROOT
        if self.section is not None:
            return self.section + "".join(f"({label})" for label in self.labels)
        if self.appendix is not None:
            return f"Appendix {self.appendix} to Subpart {self.subpart} of Part {self.part}"
        if self.subpart is not None:
            return f"Part {self.part} Subpart {self.subpart}"
        return f"Part {self.part}"

    def cite(self) -> str:
        """The id as a citation: ``45 CFR 164.502(a)``, ``45 CFR Part 164, Subpart E``."""
        if self.part is None:
            return "45 CFR Parts 160, 162 and 164"
        if self.section is not None or self.appendix is not None:
            return f"45 CFR {self}"
        if self.subpart is not None:
            return f"45 CFR Part {self.part}, Subpart {self.subpart}"
        return f"45 CFR Part {self.part}"


def section_id(node_id: str) -> str | None:
    """The section an id names ("164.502" for ``164.502(a)(1)``); None for a part, a subpart,
    an appendix, the root, and for text that is not an id."""
    found = RegId.try_parse(node_id)
    return found.section if found is not None else None


@lru_cache(maxsize=65_536)
def _parse(text: str) -> RegId:
    s = " ".join(text.split())
    if s.upper() == ROOT:
        return RegId()
    for pattern in (_APPENDIX_RE, _SUBPART_OF_RE, _PART_RE):
        m = pattern.fullmatch(s)
        if m:
            groups = m.groupdict()
            subpart = groups.get("subpart")
            return RegId(
                m.group("part"),
                subpart=subpart.replace("–", "-") if subpart else None,
                appendix=groups.get("appendix"),
            )
    m = _SECTION_RE.fullmatch(s)
    if m is None:
        raise ValueError(f"{text[:80]!r} is not a regulation id (ids look like {EXAMPLES})")
    part, section = m.group("part"), f"{m.group('part')}.{m.group('section')}"
    rest = m.group("rest").strip()
    if not rest:
        return RegId(part, section)
    try:
        head, labels = split_labels(rest)
    except ValueError:
        raise ValueError(
            f"{text[:80]!r}: unbalanced parentheses; each paragraph label is one group, "
            "as 164.502(a)(1)(i)"
        ) from None
    joined = "".join(f"({label})" for label in labels)
    if head or _BETWEEN.sub(")(", rest) != _BETWEEN.sub(")(", joined):
        raise ValueError(
            f"{text[:80]!r}: after the section only paragraph labels in parentheses may "
            "follow, as 164.502(a)(1)(i)"
        )
    return RegId(part, section, tuple(" ".join(label.split()) for label in labels))
