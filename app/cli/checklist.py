"""The checklist as ``pcheck check`` prints it for the checklist methods (``checklist``,
``checklist-llm``): the verdict; for each flow, its parts with their spans, the facts read,
whether HIPAA applies and why, the prohibitions met and the candidate permissions (the first
:data:`~privacy_checklist.app.cli.options.TOP_CANDIDATES`, or every one), each condition
✓ met / ✗ unmet / ? unknown beside the words of the case that decided it and the words of the
law that state it; then why, the norms it rests on, what would change it and the questions the
model was asked. It reads only the verdict's checklist
(:class:`~privacy_checklist.reasoning.checklist.report.CaseReport`), so a logged verdict prints
the same."""

from __future__ import annotations

import textwrap

from privacy_checklist.app.cli.common import WIDTH, wrap
from privacy_checklist.app.cli.options import TOP_CANDIDATES
from privacy_checklist.reasoning.checklist.asked import Answer
from privacy_checklist.reasoning.checklist.report import (
    CaseReport,
    ConditionReport,
    FlowReport,
    NormReport,
    Weighed,
)
from privacy_checklist.reasoning.methods import CHECKLIST_LLM
from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.verdict import Verdict

FLOW_PARTS = ("sender", "recipient", "subject", "information", "purpose", "consent")
MARKS = {"met": "✓", "unmet": "✗", "unknown": "?"}


def _quoted(text: object) -> str:
    return f"“{' '.join(str(text).split())}”"


def _span(fact: Fact | None) -> str:
    return f" [{fact.start}:{fact.end}]" if fact is not None and fact.start >= 0 else ""


def fact_words(fact: Fact) -> str:
    """The words of the case behind a fact: its evidence, span and source; or "not stated"."""
    if fact.value is None:
        return "not stated in the case"
    said = "yes" if fact.value else "no"
    source = f" ({fact.source})" if fact.source else ""
    if not fact.evidence:
        return f"{said}{source}"
    return f"{said}: {_quoted(fact.evidence)}{_span(fact)}{source}"


def condition_lines(check: ConditionReport) -> list[str]:
    """One condition of a candidate: its mark, kind and mode, the case's words, the law's."""
    condition, status, fact = check.condition, check.status, check.fact
    kind = condition.kind.replace("_", " ")
    tags: list[str] = [status]
    if condition.mode == "one_of":
        tags.append(f"one of group {condition.group or '?'}")
    elif condition.mode == "exception":
        holds = fact.value
        tags.append(
            "an exception that holds"
            if holds
            else "an exception, stated not to hold"
            if holds is False
            else "an exception, not stated: it counts only when the case states it"
        )
    if check.presumed:
        tags.append("presumed: the case does not say otherwise")
    head = f"{MARKS.get(status, '?')} {kind} ({'; '.join(tags)})"
    lines = [head, f"    case: {fact_words(fact)}"]
    if condition.quote:
        lines.append(f"    law:  {_quoted(condition.quote)} ({condition.node})")
    return lines


def norm_lines(check: NormReport, *, prohibition: bool = False) -> list[str]:
    """A candidate (or a prohibition met) and its conditions, as indented lines; the exceptions
    the case does not state (they count only when it does) on one line."""
    mark = "!" if prohibition else MARKS.get(check.status, "?")
    fits = f"; {check.fits}" if check.fits else ""
    lines = [f"{mark} {check.node} ({check.status}{fits})"]
    if check.summary:
        lines.append(f"    {check.summary}")
    if check.set_aside:
        lines.append(f"    {MARKS['unmet']} set aside: {check.set_aside}")
    quiet = []
    for condition in check.conditions:
        if condition.condition.mode == "exception" and condition.fact.value is None:
            quiet.append(condition.condition.kind.replace("_", " "))
            continue
        lines += ["    " + line for line in condition_lines(condition)]
    if quiet:
        lines.append(
            f"    {MARKS['met']} exceptions the case does not state (each would count only if it "
            f"did): {', '.join(dict.fromkeys(quiet))}"
        )
    if not check.conditions:
        lines.append("    (no condition)")
    return lines


def _print_lines(lines: list[str], indent: str) -> None:
    """Indented lines, each wrapped under its own text (a marked line hangs by two columns, a
    case: or law: line under its words)."""
    for line in lines:
        body = line.lstrip(" ")
        pad = indent + " " * (len(line) - len(body))
        hang = 2 if body[:1] in "✓✗?!" else 6 if body.startswith(("case:", "law:")) else 0
        print(textwrap.fill(body, WIDTH, initial_indent=pad, subsequent_indent=pad + " " * hang))


def flow_line(number: int, flow: Flow) -> str:
    """A flow: its verb and parts, each with the law's term and its span."""
    parts = []
    for key in FLOW_PARTS:
        part = flow.part(key)
        if part is None or not part.text:
            continue
        where = f" [{part.start}:{part.end}]" if part.start >= 0 else ""
        parts.append(f"{key}: {_quoted(part.text)} ({part.resolved or '?'}){where}")
    said = flow.verb.text if flow.verb is not None else None
    text = "; ".join(parts) or (flow.summary or "its parts were not read")
    return f"Flow {number}" + (f" ({said})" if said else "") + f": {text}"


def print_flow_checklist(
    number: int, report: FlowReport, *, every: bool, deciding: bool, alone: bool = True
) -> None:
    """One flow's checklist: the flow, the facts read, applicability, prohibitions met, the
    candidates (and, ``alone`` False, the flow's own verdict)."""
    print(wrap(flow_line(number, report.flow), "") + ("   <- decides the case" if deciding else ""))
    where = report.applicability
    # the facts read, but those applicability gives as its reasons (shown there)
    given = {f.key for f in where.facts}
    facts = [f for f in report.flow.facts.values() if f.value is not None and f.key not in given]
    if facts:
        print("  Facts read from the case:")
        for fact in facts:
            print(wrap(f"- {fact.key.replace('_', ' ')}: {fact_words(fact)}", "    "))
    print(
        wrap(
            f"1. Applicability: {'covered' if where.applies else 'not covered'} by HIPAA: "
            f"{where.reason or '?'}",
            "  ",
        )
    )
    for fact in where.facts:
        mark = "✓" if fact.value else "✗"
        print(wrap(f"{mark} {fact.key.replace('_', ' ')}: {fact_words(fact)}", "       "))
    if not where.applies:
        if not alone:
            print(wrap(f"Verdict of this flow: {report.label.replace('_', ' ')}", "  "))
        return
    prohibitions = report.prohibitions
    print(f"  2. Prohibitions met: {'none' if not prohibitions else len(prohibitions)}")
    for check in prohibitions:
        _print_lines(norm_lines(check, prohibition=True), "       ")
    candidates = report.candidates
    shown = candidates if every else candidates[:TOP_CANDIDATES]
    counted = f"{len(candidates)}" + (
        f"; the first {len(shown)} in the checklist's order (--all for every one)"
        if len(shown) < len(candidates)
        else ""
    )
    print(f"  3. Candidate permissions: {counted}")
    if not candidates:
        print("       none: no permission fits this sender, recipient and information")
    for check in shown:
        _print_lines(norm_lines(check), "       ")
    if alone:
        return
    verdict = report.label.replace("_", " ")
    print(wrap(f"Verdict of this flow: {verdict}: {report.explanation}", "  "))


def print_checklist(verdict: Verdict, *, every: bool = False) -> None:
    """The checklist methods' verdict: the verdict, every flow's checklist, then why, the norms
    it rests on, what would change it and (checklist-llm) the questions the model was asked."""
    checklist = verdict.checklist or CaseReport(label="", explanation="", rule="?", parser="?")
    flows = checklist.flows
    blend = checklist.blend
    print(
        f"Verdict: {verdict.label.replace('_', ' ')}"
        + (
            ""
            if checklist.decided or blend or not flows
            else "  (on the facts as stated; it turns on facts the case does not state)"
        )
    )
    if blend is not None:
        print(wrap(_weighed(blend), ""))
    print(
        wrap(
            f"Checklist ({verdict.method}; facts read with {checklist.parser or '?'}; "
            f"unknown facts weighed by the rule '{checklist.rule or '?'}'):",
            "",
        )
    )
    if not flows:
        print("  No flow of health information was read from the case.")
    for number, flow in enumerate(flows, start=1):
        print_flow_checklist(
            number,
            flow,
            every=every,
            deciding=len(flows) > 1 and flow == checklist.deciding,
            alone=len(flows) == 1,
        )
    if checklist.explanation:
        print(wrap(f"Why: {checklist.explanation}", ""))
    print("Rests on: " + (", ".join(n.id for n in verdict.norms) or "none (not covered by HIPAA)"))
    for norm in verdict.norms:
        print(wrap(f"{norm.id}: {norm.text}", "  "))
    turns = checklist.turns
    print("What would change it:" + ("" if turns else " nothing the case leaves open"))
    for turn in turns:
        print(bullet(turn.text))
    if verdict.method == CHECKLIST_LLM:
        _print_asked(verdict, checklist.asked or ())
    if verdict.failure:
        print(wrap(f"Failure: {verdict.failure}", ""))
    shown = {checklist.explanation} | {t.text for t in turns}
    rest = [s for s in verdict.reasoning if s not in shown and not s.startswith("Facts read")]
    if rest:
        print("Reasoning:")
    for step in rest:
        print(bullet(step))


def _print_asked(verdict: Verdict, asked: tuple[Answer, ...]) -> None:
    """What the model was asked, what it answered and whether the answer was accepted."""
    print(f"Asked the model ({verdict.llm or '?'}): {len(asked) or 'nothing'}")
    for item in asked:
        said = item.answer or "no readable answer"
        line = f"flow {item.question.flow + 1}, {item.question.key.replace('_', ' ')}: {said}"
        if item.accepted:
            line += f": {_quoted(item.evidence)}{_span(item.fact)} (accepted)"
        elif item.problem:
            line += f" (not accepted: {item.problem})"
        print(bullet(line))


def bullet(text: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent="  - ", subsequent_indent="    ")


def _weighed(blend: Weighed) -> str:
    """What the learned layer weighed, and what the checklist alone read."""
    evidence = "cues, retrieved norms" + (" and sentence embedding" if blend.embed else "")
    odds = ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in blend.probabilities.items())
    return (
        "Weighed by the learned layer (fitted on narratives by many writers) from the checklist "
        f"below and the case's {evidence}: {odds}; the checklist alone reads "
        f"{blend.checklist_label.replace('_', ' ')}."
    )
