"""The checklist reasoner: read the facts of a case, decide each flow by the law's conditions.

It is the ``checklist`` method: :class:`~privacy_checklist.reasoning.reading.facts.FactReader`
reads the flows of the narrative and the facts each condition asks about (stated true, stated
false, or unknown, with their spans), :func:`~privacy_checklist.reasoning.checklist.decide.decide`
judges each flow against the curated catalogue (:mod:`privacy_checklist.kg.conditions`), and the
case takes the verdict of its most serious flow
(:func:`~privacy_checklist.reasoning.checklist.decide.combine`). No LLM, no retrieval model and
no torch: only the knowledge base and, when installed, spaCy's small English parser (without it
the reader falls back to patterns and says so in every verdict).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from privacy_checklist.kg.conditions import Catalogue, Reading, load_catalogue
from privacy_checklist.reasoning.checklist.decide import (
    DEFAULT_PROHIBITION,
    Checklist,
    UnknownRule,
    combine,
    decide,
    presumed_kinds,
)
from privacy_checklist.reasoning.checklist.report import CaseReport, FlowReport
from privacy_checklist.reasoning.learned import case_flow, conditions
from privacy_checklist.reasoning.learned.blend import Blend, model_path
from privacy_checklist.reasoning.reading.types import Part
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.reasoning.verdict import CitedNorm, Label, Verdict

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.learned.case_flow import CaseFlow
    from privacy_checklist.reasoning.learned.conditions import Read
    from privacy_checklist.reasoning.reading.facts import FactReader
    from privacy_checklist.reasoning.reading.types import Flow

NAME = "checklist"
LABEL_WORDS = {"permit": "Permitted", "prohibit": "Prohibited", "not_applicable": "Not covered"}
#: what the case's verdict is when no flow of health information is read at all
NO_FLOW = (
    "No use or disclosure of health information was read in the case, so no HIPAA rule is "
    "engaged; if the case describes one, rephrase it as who gave what information to whom."
)


@dataclass
class ChecklistReasoner:
    """The ``checklist`` method (see the module docstring).

    Args:
        kb: the knowledge base (tree, role and attribute graphs, norms).
        reader: the facts reader (default: one on ``kb``, with spaCy when installed).
        catalogue: the curated conditions (default: the shipped catalogue, checked against
            ``kb``'s tree).
        rule: how a fact the case does not state is weighed.
        blend: weigh the checklist with the case's other evidence (every narrative)
            (:mod:`~privacy_checklist.reasoning.learned.blend`). Off by default: since the
            conditions are read with the learned reader, the checklist alone is better leaving
            whole writers out (accuracy 0.646 against 0.644 with the layer, macro-F1 0.645
            against 0.610; long narratives 0.667 against 0.548; the court-style synthetic
            cases left out whole 0.720 against 0.473), though not on short narratives (0.637
            against 0.683) (the Results page, ``bench/experiments/blend_lwo.py``).
        conditions: read the conditions with the learned condition reader beside the rule
            reader (:mod:`~privacy_checklist.reasoning.learned.conditions`); False: the rule
            reader's facts alone. A callable (text -> each kind's reading) stands in for the
            shipped reader (the experiments' readers fitted without a writer).
        case_flow: read the flow the case turns on with the learned case-flow reader
            (:mod:`~privacy_checklist.reasoning.learned.case_flow`; only with ``conditions``)
            where the rule reader reads a flow HIPAA covers: that flow decides the case, with
            the learned conditions over every fact the rule reader read
            (:func:`~privacy_checklist.reasoning.learned.case_flow.rule_facts`); the rule
            reader's flows are still checked and reported, and where none of them is covered
            the case is not covered (read from the whole text alone, the case-flow reader
            finds a covered flow in court cases about wiretaps or wages: on the real dev court
            cases, reported once, its ungated reading collapsed to accuracy 0.181, and
            GoldCoin's synthetic cases, read by nothing fitted on them, show the same: the
            Results page, ``bench/experiments/case_flow.py``). A callable (text, the rule
            reader's flows -> the case flow) stands in for the shipped reader. Off by default:
            leaving writers out it reads the corpus's 41 writers a little better than the rule
            reader's flows (accuracy 0.602 against 0.586; short 0.598, long 0.611) and
            GoldCoin's synthetic train cases too (0.751 against 0.731), but the held-out
            narratives worse (0.717 against 0.775).
    """

    kb: KnowledgeBase
    reader: FactReader | None = None
    catalogue: Catalogue | None = None
    rule: UnknownRule = UnknownRule.STATED
    blend: bool = False
    conditions: bool | Callable[[str], Mapping[str, Read]] = True
    case_flow: bool | Callable[[str, Sequence[Flow]], CaseFlow] = False
    name: str = field(default=NAME, init=False)
    _blend: Blend | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.reader is None:
            from privacy_checklist.reasoning.reading.facts import FactReader

            self.reader = FactReader(self.kb)
        if self.catalogue is None:
            self.catalogue = catalogue_of(self.kb)

    @property
    def parser(self) -> str:
        assert self.reader is not None
        return str(self.reader.parser)

    def checklists(self, text: str) -> list[Checklist]:
        """The checklist of every flow read in ``text``: the flow the case turns on first when
        the learned readers are on (it decides the case), then the rule reader's flows."""
        assert self.reader is not None and self.catalogue is not None
        flows = read_flows = self.reader.read(text).flows
        if not self.conditions:
            return [decide(self.catalogue, flow, self.rule) for flow in flows]
        vectors = None
        if callable(self.conditions):
            reads = self.conditions(text)
        else:
            reader = conditions.shipped()
            spans, vectors = reader.vectors(text)
            probs = reader.probabilities_of(vectors)
            reads = conditions.reads_of(text, spans, probs, reader.kinds)
        flows = conditions.merge(flows, reads)
        checked = [decide(self.catalogue, flow, self.rule) for flow in flows]
        if not self.case_flow:
            return checked
        found = combine(checked)
        if found is None or found.label == "not_applicable":
            return checked  # no flow HIPAA covers read: the case flow has nothing to decide
        if callable(self.case_flow):
            read = self.case_flow(text, read_flows)
        else:
            reader = conditions.shipped()
            if vectors is None:
                vectors = reader.vectors(text)[1]
            read = case_flow.shipped(reader.encoder.digest).read(vectors, read_flows)
        facts = {
            **case_flow.rule_facts(read_flows),
            **{kind: r.fact() for kind, r in reads.items() if r.value is not None},
        }
        turning = case_flow.case_flow(
            read, facts, self.reader.ancestors, self.reader.cues.role_facts
        )
        return [decide(self.catalogue, turning, self.rule), *checked]

    def check(self, text: str) -> Verdict:
        """The verdict on a narrative.

        Raises:
            QueryError: the text is empty or not text (as for every method).
        """
        from privacy_checklist.retrieval.base import check_query

        text = check_query(text)
        return self.verdict(self.checklists(text), text)

    def learned(self) -> Blend:
        """The learned layer (loaded on first use).

        Raises:
            BlendModelError: its model is missing or does not fit the features.
        """
        if self._blend is None:
            self._blend = Blend(self.kb)
        return self._blend

    def verdict(self, checklists: list[Checklist], text: str = "") -> Verdict:
        """The case's verdict from the checklists of its flows: the most serious flow decides;
        with ``text`` given and ``blend`` on, the learned layer weighs the checklist with the
        case's other evidence, whatever the narrative's length, and says so."""
        verdict = self._verdict(checklists)
        if not (self.blend and text):
            return verdict
        weighed = self.learned().weigh(text, checklists)
        probabilities = ", ".join(f"{k} {v:.2f}" for k, v in weighed.probabilities.items())
        evidence = "cues, retrieved norms" + (" and sentence embedding" if weighed.embed else "")
        said = (
            f"The checklist alone reads {weighed.checklist_label}; the learned layer (fitted on "
            f"narratives by many writers) weighed it with the case's {evidence}: "
            f"{weighed.label} ({probabilities})."
        )
        assert verdict.checklist is not None
        if weighed.label == weighed.checklist_label:
            verdict.reasoning.insert(0, said)
            verdict.probabilities = weighed.probabilities
            verdict.checklist = replace(verdict.checklist, blend=weighed)
            return verdict
        nodes = self._support(checklists, weighed.label)
        checklist = replace(
            verdict.checklist,
            blend=weighed,
            label=weighed.label,
            rests_on=tuple(nodes),
            explanation=(
                f"{LABEL_WORDS[weighed.label]} on balance ({said[:-1]}). The checklist alone: "
                f"{verdict.checklist.explanation}"
            ),
        )
        return Verdict(
            label=Label(weighed.label),
            method=self.name,
            probabilities=weighed.probabilities,
            norms=[self._cited(node) for node in nodes],
            reasoning=[
                said
                + " The learned layer's label differs from the checklist's: the checklist below "
                "is the checklist's own reading.",
                *verdict.reasoning,
            ],
            roles=verdict.roles,
            hipaa_types=verdict.hipaa_types,
            flows=verdict.flows,
            checklist=checklist,
        )

    @staticmethod
    def _support(checklists: list[Checklist], label: str) -> list[str]:
        """The norms that fit a flow and support ``label``: for permit, the best candidates
        (met, then unknown with the fewest unknown facts); for prohibit, the prohibitions
        triggered, else 164.502(a) and the candidates stated unmet; none when not covered."""
        if label == "not_applicable":
            return []
        if label == "prohibit":
            triggered = [p.reading.node for c in checklists for p in c.prohibitions]
            if triggered:
                return list(dict.fromkeys(triggered))[:3]
            unmet = [
                n.reading.node for c in checklists for n in c.candidates if n.status == "unmet"
            ]
            return [DEFAULT_PROHIBITION, *list(dict.fromkeys(unmet))[:2]]
        ranked = sorted(
            (n for c in checklists for n in c.candidates if n.status != "unmet"),
            key=lambda n: (
                n.status != "met",
                n.fits.endswith("recipient: any"),
                len(n.unknown),
                len(n.presumed),
            ),
        )
        return list(dict.fromkeys(n.reading.node for n in ranked))[:3]

    def _verdict(self, checklists: list[Checklist]) -> Verdict:
        """The checklist's own verdict (the most serious flow decides)."""
        assert self.catalogue is not None
        case = combine(checklists)
        note = f"Facts read with {self.parser}."
        if case is None:
            return Verdict(
                label=Label.NOT_APPLICABLE,
                method=self.name,
                reasoning=[NO_FLOW, note],
                checklist=CaseReport(
                    label=Label.NOT_APPLICABLE.value,
                    explanation=NO_FLOW,
                    rule=self.rule.value,
                    parser=self.parser,
                ),
            )
        reports = [FlowReport.of(c, self.catalogue) for c in checklists]
        norms = [self._cited(node) for node in case.rests_on]
        reasoning = [case.explanation, *(t.text for t in case.turns), note]
        others = [c for c in checklists if c is not case]
        if others:
            why = (
                "the flow the case turns on, as the learned case-flow reader reads it"
                if case.flow.turns_on
                else "a prohibited flow first, then a permitted one"
            )
            reasoning.insert(1, f"{len(checklists)} flows read; this one decides the case ({why}).")
        return Verdict(
            label=Label(case.label),
            method=self.name,
            norms=norms,
            reasoning=reasoning,
            roles=_words_of(
                (case.flow.sender_roles, case.flow.sender),
                (case.flow.recipient_roles, case.flow.recipient),
            ),
            hipaa_types=_words_of((case.flow.information_types, case.flow.information)),
            flows=[c.flow for c in checklists],
            checklist=CaseReport(
                label=case.label,
                explanation=case.explanation,
                rule=case.rule.value,
                parser=self.parser,
                flows=tuple(reports),
                deciding=next(r for c, r in zip(checklists, reports, strict=True) if c is case),
                rests_on=case.rests_on,
                decided=case.decided,
            ),
        )

    def _cited(self, node: str) -> CitedNorm:
        unit = self.kb.tree.get(node)
        assert self.catalogue is not None
        reading = self.catalogue.readings.get(node)
        return CitedNorm(
            id=node,
            text=unit.text if unit is not None else "",
            norm_type=reading.norm_type if reading is not None else "",
        )

    def settings(self) -> dict[str, Any]:
        """What decides its verdicts besides the case, for an evaluation's reuse rule."""
        assert self.reader is not None and self.catalogue is not None
        files = ("fact_cues.json", "presumptions.json")
        read_by = conditions.digest() if self.conditions is True else "none"
        payload: dict[str, Any] = {
            "conditions": "given" if callable(self.conditions) else read_by,
            "rule": self.rule.value,
            "parser": self.parser,
            "presumed": sorted(presumed_kinds()),
            "files": {
                name: hashlib.sha256(data_path(name).read_bytes()).hexdigest() for name in files
            },
            "catalogue": sorted(
                (
                    r.node,
                    r.norm_type,
                    r.sender_roles,
                    r.recipient_roles,
                    r.information,
                    [c.to_json() for c in r.conditions],
                )
                for r in self.catalogue.readings.values()
            ),
        }
        if self.case_flow and self.conditions:  # (off, the digest stays what it was)
            payload["case_flow"] = "given" if callable(self.case_flow) else case_flow.digest()
            # how it decides is part of what a logged verdict was reached by
            payload["case_flow_decides"] = "where a covered flow is read, over the rule facts"
        from privacy_checklist.reasoning.evaluation.digests import kb_digest

        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode())
        out = {"rule": self.rule.value, "parser": self.parser, "checklist": digest.hexdigest()}
        out["kb"] = kb_digest(self.kb)
        if self.blend:
            model = model_path()
            out["blend"] = (
                hashlib.sha256(model.read_bytes()).hexdigest()[:16] if model.exists() else "none"
            )
        return out


def catalogue_of(kb: KnowledgeBase) -> Catalogue:
    """The readings the checklist decides by: every permitting or prohibiting norm of the
    knowledge base's effective view that carries conditions (the curated readings, with an
    editor's validated edit winning, as everywhere norms are read), with the curated summaries.

    Raises:
        CatalogueError: the curated readings do not fit this knowledge base's tree.
    """
    base = load_catalogue(kb.tree)
    readings: dict[str, Reading] = {}
    for node, norm in kb.norms.items():
        if not norm.conditions or norm.norm_type not in ("permit", "prohibit"):
            continue
        curated = base.readings.get(node)
        readings[node] = Reading(
            node=node,
            norm_type="permit" if norm.norm_type == "permit" else "prohibit",
            summary=curated.summary if curated is not None else norm.purpose,
            sender_roles=tuple(norm.sender_roles) or ("covered entity",),
            recipient_roles=tuple(norm.recipient_roles) or ("any",),
            information=norm.information_class or "protected health information",
            purpose=norm.purpose,
            conditions=tuple(norm.conditions),
            note=curated.note if curated is not None else "",
            yields_to=curated.yields_to if curated is not None else (),
        )
    return Catalogue(kinds=base.kinds, readings=readings)


def _words_of(*read: tuple[frozenset[str], Part | None]) -> dict[str, str]:
    """Each role (or information type) read, with the words of the case it was read from (the
    shape every method's ``Verdict.roles`` and ``hipaa_types`` take); a term two parts reach
    names both."""
    out: dict[str, list[str]] = {}
    for terms, part in read:
        for term in sorted(terms):
            words = out.setdefault(term, [])
            if part is not None and part.text not in words:
                words.append(part.text)
    return {term: "; ".join(words) for term, words in out.items()}
