"""The checklist: decide a flow by the conditions the law sets, and say what would change it.

HIPAA's Privacy Rule is a default prohibition (164.502(a)) with permissions that each carry
conditions. The checklist asks, for one flow of a case, in order:

1. **Applicability.** Does a covered entity, a business associate, or their workforce acting as
   such use or disclose protected health information? If the case says not (a friend, an
   employer's own records, the individual's own disclosure, de-identified data ...), the flow
   is not covered by HIPAA, and the checklist says why. A workforce member who uses the
   entity's records with no work reason ("out of curiosity") is covered: no permission
   covers a use outside the job, so it is prohibited (164.502(a)).
2. **Prohibitions.** Does a prohibition name the flow (a sale of protected health information,
   marketing, genetic information for underwriting, psychotherapy notes without an
   authorization)? Its triggers must be stated; an exception stated true lifts it.
3. **Candidate permissions.** The curated readings (:mod:`privacy_checklist.kg.conditions`)
   whose sender and recipient roles subsume the flow's (through the role graph) and whose
   information type fits.
4. **Conditions.** For each candidate, each condition met, unmet or unknown, with the fact
   behind it. A candidate is *met* when every required condition and one condition of every
   ``one_of`` group is met and no exception holds; *unmet* when one of them is stated false
   (or an exception stated true); otherwise *unknown*. A kind may be read through another
   (``derived_from``: "more than the minimum necessary" is the minimum necessary stated false),
   and a general permission yields to the paragraph that governs the flow
   (``Reading.yields_to``: a disclosure a law requires still meets 164.512(c), (e) or (f)).

The verdict follows by a rule a person can read: **permitted** when a candidate is met;
**prohibited** when a prohibition applies, when no permission fits the flow (164.502(a)), or
when every candidate is unmet. An unknown fact is weighed by the :class:`UnknownRule`: under
the default (``stated``), a fact the case does not state counts as not met — a permission must
be shown, as the default prohibition has it — except the few kinds the law lets a covered entity
presume (``reasoning/data/presumptions.json``: its professional judgment, the minimum necessary,
a public official's representations). The verdict still names every fact it turned on:
"permitted if a court ordered the disclosure (164.512(e)(1)(i)); otherwise prohibited under
164.502(a)".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from typing import Any, Literal

from privacy_checklist.kg.conditions import Catalogue, Condition, ConditionKind, Reading
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.text import data_path

Status = Literal["met", "unmet", "unknown"]
CheckLabel = Literal["permit", "prohibit", "not_applicable"]
DEFAULT_PROHIBITION = "164.502(a)"
#: information types a reading may name, beyond protected health information in general
SPECIAL_INFORMATION = (
    "psychotherapy notes",
    "genetic information",
    "de-identified information",
    "limited data set",
)
ANY = "any"


class UnknownRule(StrEnum):
    """How a fact the case does not state is weighed.

    - ``stated``: not met, except the kinds the law lets a covered entity presume (default);
    - ``strict``: never met;
    - ``lenient``: always met (the covered entity is presumed to have done what the law asks).
    """

    STATED = "stated"
    STRICT = "strict"
    LENIENT = "lenient"


@cache
def presumed_kinds() -> frozenset[str]:
    """The condition kinds that hold unless the case says otherwise (reasoning/data)."""
    data = json.loads(data_path("presumptions.json").read_text(encoding="utf-8"))
    return frozenset(data["presumed"])


@dataclass(frozen=True)
class ConditionCheck:
    """One condition of a candidate norm, judged against the case."""

    condition: Condition
    status: Status
    fact: Fact
    presumed: bool = False


@dataclass(frozen=True)
class NormCheck:
    """A candidate norm and the verdict on its conditions."""

    reading: Reading
    status: Status
    conditions: tuple[ConditionCheck, ...]
    fits: str = ""
    #: why a permission whose conditions are met does not permit the flow: a paragraph that
    #: governs the flow more specifically fits it and is not met (``Reading.yields_to``)
    set_aside: str = ""

    @property
    def unknown(self) -> list[ConditionCheck]:
        return [
            c
            for c in self.conditions
            if c.fact.value is None
            and c.condition.mode != "exception"
            and (c.status != "met" or c.presumed)
        ]

    @property
    def unmet(self) -> list[ConditionCheck]:
        return [c for c in self.conditions if c.status == "unmet"]

    @property
    def presumed(self) -> list[ConditionCheck]:
        return [c for c in self.conditions if c.presumed]


@dataclass(frozen=True)
class Turn:
    """A fact the verdict turns on: were it the other way, the verdict would be ``then``."""

    kind: str
    node: str
    question: str
    then: CheckLabel
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "node": self.node,
            "question": self.question,
            "then": self.then,
            "text": self.text,
        }


@dataclass(frozen=True)
class Applicability:
    applies: bool
    reason: str
    facts: tuple[Fact, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "applies": self.applies,
            "reason": self.reason,
            "facts": [f.to_json() for f in self.facts],
        }


@dataclass(frozen=True)
class Checklist:
    """For one flow: applicability, the prohibitions met, the candidates, and the verdict.

    ``turns`` are the facts the verdict turns on; ``decided`` is False when a fact the case does
    not state would make a candidate permission apply (the verdict is then the one on the facts
    as stated, and ``turns`` says what would change it).
    """

    flow: Flow
    applicability: Applicability
    prohibitions: tuple[NormCheck, ...]
    candidates: tuple[NormCheck, ...]
    label: CheckLabel
    rests_on: tuple[str, ...]
    explanation: str
    turns: tuple[Turn, ...] = ()
    rule: UnknownRule = UnknownRule.STATED
    decided: bool = True


# --------------------------------------------------------------------------- fit


def roles_fit(wanted: Sequence[str], have: frozenset[str]) -> str | None:
    """Which of a reading's roles the flow's party reaches ("any" fits everyone); None: none."""
    if ANY in wanted:
        return ANY
    for role in wanted:
        if role in have:
            return role
    return None


def information_fits(reading: Reading, information: frozenset[str]) -> bool:
    """A reading about a special type (psychotherapy notes ...) fits only that type; one about
    protected health information fits any health information that is not de-identified."""
    if reading.information in SPECIAL_INFORMATION:
        return reading.information in information
    return "de-identified information" not in information


def _condition(
    condition: Condition, flow: Flow, rule: UnknownRule, presumed: frozenset[str]
) -> ConditionCheck:
    fact = flow.fact(condition.kind)
    if fact.value is not None:
        holds = fact.value
        return ConditionCheck(condition, _status(condition, holds), fact)
    if condition.mode == "exception":
        # an exception is weighed only when the case states it
        return ConditionCheck(condition, "met", fact)
    if rule is UnknownRule.LENIENT or (rule is UnknownRule.STATED and condition.kind in presumed):
        return ConditionCheck(condition, "met", fact, presumed=True)
    return ConditionCheck(condition, "unknown", fact)


def _status(condition: Condition, holds: bool) -> Status:
    if condition.mode == "exception":
        return "unmet" if holds else "met"
    return "met" if holds else "unmet"


def check_norm(
    reading: Reading,
    flow: Flow,
    rule: UnknownRule = UnknownRule.STATED,
    presumed: frozenset[str] | None = None,
    fits: str = "",
) -> NormCheck:
    """Judge each condition of ``reading`` against ``flow`` and combine them.

    Required conditions must all be met, every ``one_of`` group needs one met condition, and
    no exception may hold. A condition stated false (an exception stated true) makes the norm
    unmet; otherwise an unknown one leaves it unknown. A norm whose conditions are all met only
    by presumption stays unknown: at least one must be stated true.
    """
    presumed = presumed_kinds() if presumed is None else presumed
    checks = tuple(_condition(c, flow, rule, presumed) for c in reading.conditions)
    statuses: list[Status] = [c.status for c in checks if c.condition.mode != "one_of"]
    groups: dict[str, list[Status]] = {}
    for check in checks:
        if check.condition.mode == "one_of":
            groups.setdefault(check.condition.group, []).append(check.status)
    for members in groups.values():
        if "met" in members:
            statuses.append("met")
        elif all(s == "unmet" for s in members):
            statuses.append("unmet")
        else:
            statuses.append("unknown")
    status: Status = (
        "unmet" if "unmet" in statuses else "unknown" if "unknown" in statuses else "met"
    )
    if status == "met" and not any(
        c.fact.value is True and c.condition.mode != "exception" for c in checks
    ):
        # a permission is never met on presumptions alone: the case must state at least one
        # of the things it is about (its purpose, its recipient's role, its document)
        status = "unknown"
    return NormCheck(reading, status, checks, fits)


def _triggers_hold(check: NormCheck) -> bool:
    """A prohibition's triggers are all stated true (each required one, one of every group)."""
    triggers = [c for c in check.conditions if c.condition.mode != "exception"]
    stated = all(c.fact.value is True for c in triggers if c.condition.mode == "required")
    groups: dict[str, bool] = {}
    for c in triggers:
        if c.condition.mode == "one_of":
            groups[c.condition.group] = groups.get(c.condition.group, False) or (
                c.fact.value is True
            )
    return bool(triggers) and stated and all(groups.values())


def _excepted(check: NormCheck) -> bool:
    """An exception of the norm is stated true."""
    return any(c.fact.value is True for c in check.conditions if c.condition.mode == "exception")


def _triggered(check: NormCheck) -> bool:
    """A prohibition applies when its triggers are stated true and no exception is."""
    return _triggers_hold(check) and not _excepted(check)


def _lifted(check: NormCheck) -> bool:
    """A prohibition whose triggers are stated true and that an exception stated true lifts:
    the exception is itself a permission ("except ... to defend itself in a legal action",
    "except a face-to-face communication")."""
    return _triggers_hold(check) and _excepted(check)


# --------------------------------------------------------------------------- decide


def _order(check: NormCheck) -> tuple[int, int, int, int, int]:
    """Met first, then unknown, then unmet; within each, a norm whose recipient the flow fits
    by role before one open to any recipient, then fewer unmet, unknown, presumed conditions."""
    rank = {"met": 0, "unknown": 1, "unmet": 2}[check.status]
    broad = int(check.fits.endswith(f"recipient: {ANY}"))
    return (rank, broad, len(check.unmet), len(check.unknown), len(check.presumed))


def applicability(flow: Flow) -> Applicability:
    """Not covered when the case states that no covered party acts on protected health
    information; covered otherwise (the checklist then looks for a permission)."""
    reasons = {
        "sender_covered": "the sender is not a covered entity, a business associate or their "
        "workforce",
        "information_is_phi": "the information is not protected health information",
    }
    # a workforce member who looks up or passes on the entity's records with no work reason
    # ("out of curiosity") is still the covered entity's workforce using its protected health
    # information: covered, and prohibited by default (see decide); not a reason it is not
    stated = [flow.fact(key) for key in (*reasons, "acting_in_role")]
    for fact in stated:
        if fact.value is False and fact.key in reasons:
            why = f' ("{fact.evidence}")' if fact.evidence else ""
            return Applicability(False, f"{reasons[fact.key]}{why}", (fact,))
    deidentified = flow.fact("de_identified")
    if deidentified.value is True and "business associate" not in flow.recipient_roles:
        # 164.502(d)(2): "The requirements of this subpart do not apply to information that
        # has been de-identified"; giving a business associate the records to de-identify
        # (164.502(d)(1)) is a use of protected health information, and covered
        why = f' ("{deidentified.evidence}")' if deidentified.evidence else ""
        return Applicability(
            False,
            "the information is de-identified, and the requirements of the Privacy Rule do not "
            f"apply to it (164.502(d)(2)){why}",
            (deidentified,),
        )
    return Applicability(
        True,
        "a covered party uses or discloses protected health information",
        tuple(f for f in stated if f.value is not None),
    )


#: the kinds of covered entity; a sender read only as "a covered entity" (a front desk, staff
#: of an organization the case does not name) may be any of them
COVERED_KINDS = frozenset({"health care provider", "health plan", "health care clearinghouse"})


def sender_roles_for_permissions(roles: frozenset[str]) -> frozenset[str]:
    """A sender read as a covered entity of no known kind fits a permission of any kind (the
    case does not say which it is); prohibitions keep the roles as read."""
    if "covered entity" in roles and not roles & COVERED_KINDS:
        return roles | COVERED_KINDS
    return roles


def candidates(catalogue: Catalogue, flow: Flow) -> list[tuple[Reading, str]]:
    """The permissions whose sender and recipient roles and information fit the flow."""
    out: list[tuple[Reading, str]] = []
    senders = sender_roles_for_permissions(flow.sender_roles)
    for reading in catalogue.permissions():
        sender = roles_fit(reading.sender_roles, senders) if flow.sender_roles else ANY
        recipient = roles_fit(reading.recipient_roles, flow.recipient_roles or frozenset())
        if (
            sender is None
            or recipient is None
            or not information_fits(reading, flow.information_types)
        ):
            continue
        out.append((reading, f"sender: {sender}; recipient: {recipient}"))
    return out


def decide(
    catalogue: Catalogue,
    flow: Flow,
    rule: UnknownRule = UnknownRule.STATED,
    presumed: frozenset[str] | None = None,
) -> Checklist:
    """The checklist of one flow and its verdict (see the module docstring for the rule)."""
    presumed = presumed_kinds() if presumed is None else presumed
    flow = derive_facts(flow, catalogue.kinds)
    where = applicability(flow)
    if not where.applies:
        return Checklist(
            flow,
            where,
            (),
            (),
            "not_applicable",
            (),
            f"Not covered by HIPAA: {where.reason}.",
            rule=rule,
        )
    prohibitions, lifted = _prohibitions(catalogue, flow)
    checks = sorted(
        set_aside_general(
            [check_norm(r, flow, rule, presumed, fits) for r, fits in candidates(catalogue, flow)],
            presumed,
        ),
        key=_order,
    )
    outside = flow.fact("acting_in_role")
    if not prohibitions and outside.value is False:
        why = f' ("{outside.evidence}")' if outside.evidence else ""
        return Checklist(
            flow,
            where,
            (),
            tuple(checks),
            "prohibit",
            (DEFAULT_PROHIBITION,),
            f"Prohibited under {DEFAULT_PROHIBITION}: the covered entity's protected health "
            f"information was used or disclosed by its workforce with no work reason{why}; no "
            "permission covers a use outside the job.",
            rule=rule,
        )
    if prohibitions:
        nodes = tuple(p.reading.node for p in prohibitions)
        text = "; ".join(p.reading.summary for p in prohibitions)
        return Checklist(
            flow,
            where,
            tuple(prohibitions),
            tuple(checks),
            "prohibit",
            nodes,
            f"Prohibited: {text}",
            rule=rule,
        )
    met = [c for c in checks if c.status == "met"]
    if met:
        best = met[0]
        turns = tuple(_turns_against(best, catalogue, met))
        return Checklist(
            flow,
            where,
            (),
            tuple(checks),
            "permit",
            tuple(c.reading.node for c in met[:3]),
            f"Permitted under {best.reading.node}: {best.reading.summary}",
            turns,
            rule,
            decided=True,
        )
    if lifted:
        # the flow is of the kind a prohibition names, and an exception the case states
        # lifts it: that exception permits it (164.508(a)(2)(i), 164.508(a)(3)(i) ...)
        best_lift = lifted[0]
        held = [
            catalogue.kinds[c.condition.kind].label
            for c in best_lift.conditions
            if c.condition.mode == "exception"
            and c.fact.value is True
            and c.condition.kind in catalogue.kinds
        ]
        return Checklist(
            flow,
            where,
            (),
            tuple(checks),
            "permit",
            tuple(dict.fromkeys(c.reading.node for c in lifted))[:3],
            f"Permitted under the exception of {best_lift.reading.node} "
            f"({', '.join(dict.fromkeys(held))}): {best_lift.reading.summary}",
            rule=rule,
        )
    turns = tuple(_turns_for(checks, catalogue))
    if not checks:
        text = "no permission of the Privacy Rule fits this sender, recipient and information"
    else:
        text = "no permission's conditions are met: " + "; ".join(
            f"{c.reading.node} ({_missing(c, catalogue)})" for c in checks[:3]
        )
    return Checklist(
        flow,
        where,
        (),
        tuple(checks),
        "prohibit",
        # 164.502(a), and the candidates the case states a fact against
        (DEFAULT_PROHIBITION, *[c.reading.node for c in checks if c.status == "unmet"][:2]),
        f"Prohibited under {DEFAULT_PROHIBITION}: {text}.",
        turns,
        rule,
        decided=not turns,
    )


def _prohibitions(catalogue: Catalogue, flow: Flow) -> tuple[list[NormCheck], list[NormCheck]]:
    """The prohibitions whose parties and information fit the flow: those its triggers meet,
    and those an exception the case states lifts."""
    triggered: list[NormCheck] = []
    lifted: list[NormCheck] = []
    for reading in catalogue.prohibitions():
        if reading.node == DEFAULT_PROHIBITION:
            continue
        sender = roles_fit(reading.sender_roles, flow.sender_roles) if flow.sender_roles else ANY
        recipient = roles_fit(reading.recipient_roles, flow.recipient_roles)
        information = information_fits(reading, flow.information_types)
        if sender is None or recipient is None or not information:
            continue
        check = check_norm(reading, flow, UnknownRule.STRICT, frozenset(), "")
        if _triggered(check):
            triggered.append(check)
        elif _lifted(check):
            lifted.append(check)
    return triggered, lifted


def derive_facts(flow: Flow, kinds: Mapping[str, ConditionKind]) -> Flow:
    """The flow with the facts of derived kinds (``ConditionKind.derived_from``) that the case
    states through their base kind: "more than the minimum necessary" is "minimum necessary"
    stated false. A derived kind the case states directly keeps its own fact."""
    added: dict[str, Fact] = {}
    for kind in kinds.values():
        if not kind.derived_from or flow.fact(kind.id).value is not None:
            continue
        base = flow.fact(kind.derived_from)
        if base.value is None:
            continue
        added[kind.id] = Fact(
            kind.id,
            (not base.value) if kind.negate else base.value,
            base.start,
            base.end,
            base.evidence,
            f"{base.source}, from {kind.derived_from}" if base.source else kind.derived_from,
        )
    return replace(flow, facts={**flow.facts, **added}) if added else flow


def _under(node: str, prefix: str) -> bool:
    return node == prefix or node.startswith(prefix + "(")


def set_aside_general(
    checks: Sequence[NormCheck], presumed: frozenset[str] | None = None
) -> list[NormCheck]:
    """Set aside a met general permission (``Reading.yields_to``) when a paragraph it yields to
    governs the flow and none of those paragraphs is met: the specific paragraph decides
    (164.512(a)(2)). A paragraph governs the flow when it fits the flow's recipient by role and
    the case states a fact, true or false, on a condition of its own (one the general
    permission does not ask about, nor one presumed, and not from the words that met the
    general one): the flow is of the kind that paragraph regulates."""
    presumed = presumed_kinds() if presumed is None else presumed
    out = list(checks)
    for i, check in enumerate(out):
        prefixes = check.reading.yields_to
        if check.status != "met" or not prefixes:
            continue
        own = {c.kind for c in check.reading.conditions}
        used = {
            (c.fact.start, c.fact.end)
            for c in check.conditions
            if c.fact.value is not None and c.fact.start >= 0
        }

        def characteristic(
            c: ConditionCheck, own: set[str] = own, used: set[tuple[int, int]] = used
        ) -> bool:
            return (
                c.fact.value is not None
                and c.condition.kind not in own
                and c.condition.kind not in presumed
                and (c.fact.start, c.fact.end) not in used
            )

        governing = [
            other
            for other in out
            if other is not check
            and any(_under(other.reading.node, p) for p in prefixes)
            and not other.fits.endswith(f"recipient: {ANY}")
            and any(characteristic(c) for c in other.conditions)
        ]
        if not governing or any(other.status == "met" for other in governing):
            continue
        nodes = ", ".join(dict.fromkeys(o.reading.node for o in governing[:3]))
        out[i] = replace(
            check,
            status="unmet",
            set_aside=f"{nodes} governs this flow and is not met",
        )
    return out


def _missing(check: NormCheck, catalogue: Catalogue) -> str:
    unmet = [
        catalogue.kinds[c.condition.kind].label
        for c in check.unmet
        if c.condition.kind in catalogue.kinds
    ]
    unknown = [
        catalogue.kinds[c.condition.kind].label
        for c in check.unknown
        if c.condition.kind in catalogue.kinds
    ]
    parts = [check.set_aside] if check.set_aside else []
    if unmet:
        parts.append("not met: " + ", ".join(dict.fromkeys(unmet)))
    if unknown:
        parts.append("not stated: " + ", ".join(dict.fromkeys(unknown)))
    return "; ".join(parts) or "its conditions"


def _turns_for(checks: Iterable[NormCheck], catalogue: Catalogue) -> list[Turn]:
    """For a prohibition by default: each candidate that only unknown facts keep from being
    met, and those facts ("permitted if ...")."""
    out: list[Turn] = []
    seen: set[tuple[str, ...]] = set()
    for check in checks:
        if check.status != "unknown" or len(check.unknown) > 2:
            continue
        kinds = tuple(dict.fromkeys(c.condition.kind for c in check.unknown))
        if kinds in seen:
            continue
        seen.add(kinds)
        questions = " ".join(catalogue.question(k) for k in kinds)
        out.append(
            Turn(
                kind=",".join(kinds),
                node=check.reading.node,
                question=questions,
                then="permit",
                text=f"permitted under {check.reading.node} if the answer is yes: {questions} "
                f"Otherwise prohibited under {DEFAULT_PROHIBITION}.",
            )
        )
        if len(out) == 3:
            break
    return out


def _turns_against(best: NormCheck, catalogue: Catalogue, met: list[NormCheck]) -> list[Turn]:
    """For a permission: the presumed facts it rests on, when no other met candidate holds
    without them ("prohibited if ... did not ...")."""
    if len(met) > 1 and any(not c.presumed for c in met[1:]):
        return []
    out = []
    for check in best.presumed:
        question = catalogue.question(check.condition.kind)
        out.append(
            Turn(
                kind=check.condition.kind,
                node=best.reading.node,
                question=question,
                then="prohibit",
                text=f"presumed, as the case does not say otherwise: {question} If the answer "
                f"is no, {best.reading.node} does not permit it.",
            )
        )
    return out


def half_read(checklist: Checklist) -> bool:
    """A flow read without its recipient or without information named by its own words,
    prohibited only by default (164.502(a): no prohibition named it, no condition was stated
    unmet). Such a reading says little: usually a clause of the story that is no flow ("we hand
    every worker a written notice")."""
    flow = checklist.flow
    complete = (
        flow.recipient is not None
        and bool(flow.information_types)
        and flow.information is not None
        and not flow.borrowed
    )
    return (
        not complete
        and checklist.label == "prohibit"
        and not checklist.prohibitions
        and not any(c.status == "unmet" for c in checklist.candidates)
    )


def combine(checklists: Sequence[Checklist]) -> Checklist | None:
    """The case's checklist: the flow the case turns on (``turns_on``: the learned case-flow
    reader's) decides it; else a prohibited flow, then a permitted one, then a not covered one;
    a flow that is permitted or prohibited on a full reading outweighs one prohibited by
    default on a half reading (:func:`half_read`), and the flow a question asks about ("... Can
    we send it to her?") outweighs the story around it. None when the case has no flow."""
    if turning := [c for c in checklists if c.flow.turns_on]:
        return turning[0]
    full = [c for c in checklists if not half_read(c)]
    if not any(c.label in ("prohibit", "permit") for c in full):
        full = list(checklists)
    if asked := [c for c in full if c.flow.question]:
        full = asked  # "... Can we send it to her?": the question names the flow to judge
    order = ("prohibit", "permit", "not_applicable")  # the first flow of the most serious label
    return min(full, key=lambda c: order.index(c.label), default=None)
