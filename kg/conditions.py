"""Norm conditions: what a permission of Subpart E requires before it permits, read by hand.

HIPAA is a default prohibition (164.502(a)) with permissions that each carry conditions: a
disclosure to a court is permitted *in response to an order of a court*; one in response to a
subpoena only *with satisfactory assurances*. The rules annotator (:mod:`.norms`) reads who may
send what to whom; it cannot read conditions reliably, so they are curated:

- ``ontologies/condition_kinds.json``: the small vocabulary of condition kinds, each with the
  question a reader asks of a case ("Did a court order the disclosure?");
- ``ontologies/norm_conditions.json``: for each permitting and prohibiting paragraph, its CI
  reading (sender and recipient roles, information type, purpose) and its conditions, each
  quoting the words of the paragraph's own text that state it. A condition is ``required``,
  one of a ``one_of`` group (at least one must hold), or an ``exception`` (when it holds, the
  norm does not apply). ``further_conditions`` quote another paragraph of the same section
  where the text states a condition there (the "if:" list below a permission).

:func:`load_catalogue` checks every quote against the paragraph's text and records its
character span, so a build fails when a quote is not the law's own words (as the role seeds
are checked), and the browser can highlight the words that state each condition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from privacy_checklist.kg.tree import RegulationTree
from privacy_checklist.ontologies import path as ontology_path

Mode = Literal["required", "one_of", "exception"]
MODES: tuple[Mode, ...] = ("required", "one_of", "exception")
KINDS_FILE = "condition_kinds.json"
CATALOGUE_FILE = "norm_conditions.json"


class CatalogueError(ValueError):
    """The curated conditions do not fit the regulation text; the message names every fault."""


@dataclass(frozen=True, slots=True)
class ConditionKind:
    """One kind of condition: its id, a label, and the question asked of a case."""

    id: str
    label: str
    question: str
    cues_hint: str = ""
    #: a kind the case states through another: its fact is that kind's (negated when
    #: ``negate``) whenever the case does not state it directly ("more than the minimum
    #: necessary" is "minimum necessary" stated false); a derived kind is never presumed
    derived_from: str = ""
    negate: bool = False


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition of a norm, with the words of the law that state it.

    Attributes:
        kind: a :class:`ConditionKind` id.
        mode: required, one_of (see ``group``) or exception.
        quote: the words of ``node``'s own text that state it.
        node: the paragraph whose text holds the quote (the norm's own, or one below it).
        start: where the quote starts in that paragraph's text.
        end: where it ends.
        group: the one_of group it belongs to ("" otherwise).
    """

    kind: str
    mode: Mode
    quote: str
    node: str
    start: int
    end: int
    group: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "mode": self.mode,
            "quote": self.quote,
            "node": self.node,
            "span": [self.start, self.end],
        }
        if self.group:
            data["group"] = self.group
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Condition:
        start, end = data.get("span") or (0, 0)
        return cls(
            kind=str(data["kind"]),
            mode=_mode(data.get("mode", "required")),
            quote=str(data.get("quote", "")),
            node=str(data.get("node", "")),
            start=int(start),
            end=int(end),
            group=str(data.get("group", "")),
        )


@dataclass(frozen=True, slots=True)
class Reading:
    """The curated reading of one permitting or prohibiting paragraph."""

    node: str
    norm_type: Literal["permit", "prohibit"]
    summary: str
    sender_roles: tuple[str, ...]
    recipient_roles: tuple[str, ...]
    information: str
    purpose: str
    conditions: tuple[Condition, ...]
    note: str = ""
    #: paragraphs (prefixes) that govern the flows this general permission would otherwise
    #: cover: when one of them fits the flow's recipient by role and is not met, this one
    #: does not permit the flow either (164.512(a)(2): what the law requires about abuse,
    #: judicial proceedings and law enforcement must meet (c), (e) or (f))
    yields_to: tuple[str, ...] = ()

    def of_mode(self, mode: Mode) -> list[Condition]:
        return [c for c in self.conditions if c.mode == mode]

    @property
    def groups(self) -> dict[str, list[Condition]]:
        out: dict[str, list[Condition]] = {}
        for condition in self.conditions:
            if condition.mode == "one_of":
                out.setdefault(condition.group, []).append(condition)
        return out


@dataclass(frozen=True)
class Catalogue:
    """The condition kinds and every curated reading, by node id."""

    kinds: dict[str, ConditionKind]
    readings: dict[str, Reading] = field(default_factory=dict)

    def permissions(self) -> list[Reading]:
        return [r for r in self.readings.values() if r.norm_type == "permit"]

    def prohibitions(self) -> list[Reading]:
        return [r for r in self.readings.values() if r.norm_type == "prohibit"]

    def question(self, kind: str) -> str:
        found = self.kinds.get(kind)
        return found.question if found else kind.replace("_", " ")


def _mode(value: Any) -> Mode:
    if value not in MODES:
        raise CatalogueError(f"condition mode {value!r} is not one of {', '.join(MODES)}")
    return value  # type: ignore[no-any-return]


def load_kinds(path: Path | None = None) -> dict[str, ConditionKind]:
    """The condition kinds.

    Raises:
        CatalogueError: a kind is derived from a kind that is not in the file, or from a
            derived kind.
    """
    data = json.loads((path or ontology_path(KINDS_FILE)).read_text(encoding="utf-8"))
    kinds = {
        kind_id: ConditionKind(
            id=kind_id,
            label=str(entry.get("label", kind_id)),
            question=str(entry.get("question", "")),
            cues_hint=str(entry.get("cues_hint", "")),
            derived_from=str(entry.get("derived_from", "")),
            negate=bool(entry.get("negate", False)),
        )
        for kind_id, entry in data["kinds"].items()
    }
    for kind in kinds.values():
        base = kinds.get(kind.derived_from) if kind.derived_from else None
        if kind.derived_from and (base is None or base.derived_from):
            raise CatalogueError(
                f"{KINDS_FILE}: {kind.id} is derived from {kind.derived_from!r}, which is not "
                "a kind read from the case"
            )
    return kinds


def _conditions(
    entry: Mapping[str, Any], tree: RegulationTree, kinds: Mapping[str, ConditionKind]
) -> tuple[list[Condition], list[str]]:
    node = str(entry["node"])
    out: list[Condition] = []
    faults: list[str] = []
    items: Iterable[tuple[str, Mapping[str, Any]]] = [
        *((node, c) for c in entry.get("conditions", [])),
        *((str(c.get("node", "")), c) for c in entry.get("further_conditions", [])),
    ]
    for where, raw in items:
        kind, quote = str(raw.get("kind", "")), str(raw.get("quote", ""))
        if kind not in kinds:
            faults.append(f"{node}: condition kind {kind!r} is not in {KINDS_FILE}")
            continue
        unit = tree.get(where)
        if unit is None:
            faults.append(f"{node}: condition {kind} quotes {where!r}, which is not in the tree")
            continue
        start = unit.text.find(quote) if quote else -1
        if start < 0:
            faults.append(f"{node}: the words {quote!r} ({kind}) are not in {where}'s text")
            continue
        try:
            mode = _mode(raw.get("mode", "required"))
        except CatalogueError as exc:
            faults.append(f"{node}: {exc}")
            continue
        if mode == "one_of" and not raw.get("group"):
            faults.append(f"{node}: one_of condition {kind} has no group")
            continue
        out.append(
            Condition(
                kind=kind,
                mode=mode,
                quote=quote,
                node=where,
                start=start,
                end=start + len(quote),
                group=str(raw.get("group", "")) if mode == "one_of" else "",
            )
        )
    return out, faults


def load_catalogue(
    tree: RegulationTree, path: Path | None = None, kinds_path: Path | None = None
) -> Catalogue:
    """Read the curated readings and check them against ``tree``.

    Raises:
        CatalogueError: a node is not in the tree, a quote is not in its paragraph's text, a
            kind is unknown, or a mode is not one of :data:`MODES`; every fault is listed.
    """
    kinds = load_kinds(kinds_path)
    data = json.loads((path or ontology_path(CATALOGUE_FILE)).read_text(encoding="utf-8"))
    readings: dict[str, Reading] = {}
    faults: list[str] = []
    for entry in data["norms"]:
        node = str(entry["node"])
        if node not in tree:
            faults.append(f"{node}: not in the regulation tree")
            continue
        if entry.get("norm_type") not in ("permit", "prohibit"):
            faults.append(f"{node}: norm_type {entry.get('norm_type')!r} is not permit/prohibit")
            continue
        conditions, bad = _conditions(entry, tree, kinds)
        faults += bad
        faults += [
            f"{node}: yields to {other!r}, which is not in the regulation tree"
            for other in entry.get("yields_to", ())
            if str(other) not in tree
        ]
        readings[node] = Reading(
            node=node,
            norm_type=entry["norm_type"],
            summary=str(entry.get("summary", "")),
            sender_roles=tuple(entry.get("sender_roles", ())),
            recipient_roles=tuple(entry.get("recipient_roles", ())),
            information=str(entry.get("information", "")),
            purpose=str(entry.get("purpose", "")),
            conditions=tuple(conditions),
            note=str(entry.get("note", "")),
            yields_to=tuple(str(n) for n in entry.get("yields_to", ())),
        )
    if faults:
        shown = "; ".join(faults[:20]) + (
            f"; and {len(faults) - 20} more" if len(faults) > 20 else ""
        )
        raise CatalogueError(f"{len(faults)} fault(s) in {CATALOGUE_FILE}: {shown}")
    return Catalogue(kinds=kinds, readings=readings)
