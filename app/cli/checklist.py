"""The checklist as ``pcheck check`` prints it for the checklist methods (``checklist``,
``checklist-llm``): the verdict; for each flow, its parts with their spans, the facts read,
whether HIPAA applies and why, the prohibitions met and the candidate permissions (the first
:data:`~privacy_checklist.app.cli.options.TOP_CANDIDATES`, or every one), each condition
✓ met / ✗ unmet / ? unknown beside the words of the case that decided it and the words of the
law that state it; then why, the norms it rests on, what would change it and the questions the
model was asked. It reads only the verdict's JSON checklist (``Verdict.checklist``), so a
logged verdict prints the same."""

from __future__ import annotations

import textwrap
from typing import Any

from privacy_checklist.app.cli.common import WIDTH, wrap
from privacy_checklist.app.cli.options import TOP_CANDIDATES
from privacy_checklist.reasoning.methods import CHECKLIST_LLM
from privacy_checklist.reasoning.verdict import Verdict

FLOW_PARTS = ("sender", "recipient", "subject", "information", "purpose", "consent")
MARKS = {"met": "✓", "unmet": "✗", "unknown": "?"}


def _quoted(text: object) -> str:
    return f"“{' '.join(str(text).split())}”"


def _span(data: dict[str, Any]) -> str:
    span = data.get("span")
    if isinstance(span, list | tuple) and len(span) == 2:
        return f" [{span[0]}:{span[1]}]"
    return ""


def fact_words(fact: dict[str, Any]) -> str:
    """The words of the case behind a fact: its evidence, span and source; or "not stated"."""
    if fact.get("value") is None:
        return "not stated in the case"
    said = "yes" if fact["value"] else "no"
    evidence = fact.get("evidence")
    source = f" ({fact['source']})" if fact.get("source") else ""
    if not evidence:
        return f"{said}{source}"
    return f"{said}: {_quoted(evidence)}{_span(fact)}{source}"


def condition_lines(condition: dict[str, Any]) -> list[str]:
    """One condition of a candidate: its mark, kind and mode, the case's words, the law's."""
    status = str(condition.get("status"))
    mode = str(condition.get("mode") or "required")
    kind = str(condition.get("kind") or "?").replace("_", " ")
    fact = condition.get("fact") if isinstance(condition.get("fact"), dict) else {}
    tags = [status]
    if mode == "one_of":
        tags.append(f"one of group {condition.get('group') or '?'}")
    elif mode == "exception":
        holds = (fact or {}).get("value")
        tags.append(
            "an exception that holds"
            if holds
            else "an exception, stated not to hold"
            if holds is False
            else "an exception, not stated: it counts only when the case states it"
        )
    if condition.get("presumed"):
        tags.append("presumed: the case does not say otherwise")
    head = f"{MARKS.get(status, '?')} {kind} ({'; '.join(tags)})"
    lines = [head, f"    case: {fact_words(fact or {})}"]
    if condition.get("quote"):
        lines.append(f"    law:  {_quoted(condition['quote'])} ({condition.get('node', '')})")
    return lines


def norm_lines(check: dict[str, Any], *, prohibition: bool = False) -> list[str]:
    """A candidate (or a prohibition met) and its conditions, as indented lines; the exceptions
    the case does not state (they count only when it does) on one line."""
    status = str(check.get("status"))
    mark = "!" if prohibition else MARKS.get(status, "?")
    fits = f"; {check['fits']}" if check.get("fits") else ""
    lines = [f"{mark} {check.get('node')} ({status}{fits})"]
    if check.get("summary"):
        lines.append(f"    {check['summary']}")
    if check.get("set_aside"):
        lines.append(f"    {MARKS['unmet']} set aside: {check['set_aside']}")
    conditions = [c for c in check.get("conditions") or [] if isinstance(c, dict)]
    quiet = []
    for condition in conditions:
        fact = condition.get("fact") if isinstance(condition.get("fact"), dict) else {}
        if condition.get("mode") == "exception" and (fact or {}).get("value") is None:
            quiet.append(str(condition.get("kind") or "?").replace("_", " "))
            continue
        lines += ["    " + line for line in condition_lines(condition)]
    if quiet:
        lines.append(
            f"    {MARKS['met']} exceptions the case does not state (each would count only if it "
            f"did): {', '.join(dict.fromkeys(quiet))}"
        )
    if not conditions:
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


def flow_line(number: int, flow: dict[str, Any], spans: dict[str, Any]) -> str:
    """A flow: its verb and parts, each with the law's term and its span."""
    parts = []
    for key in (*FLOW_PARTS, "verb"):
        part = spans.get(key)
        if key == "verb" or not isinstance(part, dict) or not part.get("text"):
            continue
        resolved = part.get("resolved") or "?"
        start, end = part.get("start", -1), part.get("end", -1)
        where = f" [{start}:{end}]" if isinstance(start, int) and start >= 0 else ""
        parts.append(f"{key}: {_quoted(part['text'])} ({resolved}){where}")
    verb = spans.get("verb")
    said = verb.get("text") if isinstance(verb, dict) else None
    text = "; ".join(parts) or str(flow.get("flow") or "its parts were not read")
    return f"Flow {number}" + (f" ({said})" if said else "") + f": {text}"


def print_flow_checklist(
    number: int, flow: dict[str, Any], *, every: bool, deciding: bool, alone: bool = True
) -> None:
    """One flow's checklist: the flow, the facts read, applicability, prohibitions met, the
    candidates (and, ``alone`` False, the flow's own verdict)."""
    spans = flow.get("spans") if isinstance(flow.get("spans"), dict) else {}
    print(
        wrap(flow_line(number, flow, spans or {}), "")
        + ("   <- decides the case" if deciding else "")
    )
    where = flow.get("applicability") if isinstance(flow.get("applicability"), dict) else {}
    applies = bool((where or {}).get("applies", True))
    # the facts read, but those applicability gives as its reasons (shown there)
    given = {f.get("key") for f in (where or {}).get("facts") or [] if isinstance(f, dict)}
    facts = [
        f
        for f in flow.get("facts") or []
        if isinstance(f, dict) and f.get("value") is not None and f.get("key") not in given
    ]
    if facts:
        print("  Facts read from the case:")
        for fact in facts:
            key = str(fact.get("key", "")).replace("_", " ")
            print(wrap(f"- {key}: {fact_words(fact)}", "    "))
    print(
        wrap(
            f"1. Applicability: {'covered' if applies else 'not covered'} by HIPAA: "
            f"{(where or {}).get('reason') or '?'}",
            "  ",
        )
    )
    for fact in (where or {}).get("facts") or []:
        if isinstance(fact, dict):
            mark = "✓" if fact.get("value") else "✗"
            key = str(fact.get("key", "")).replace("_", " ")
            print(wrap(f"{mark} {key}: {fact_words(fact)}", "       "))
    if not applies:
        if not alone:
            print(wrap(f"Verdict of this flow: {str(flow.get('verdict')).replace('_', ' ')}", "  "))
        return
    prohibitions = [p for p in flow.get("prohibitions") or [] if isinstance(p, dict)]
    print(f"  2. Prohibitions met: {'none' if not prohibitions else len(prohibitions)}")
    for check in prohibitions:
        _print_lines(norm_lines(check, prohibition=True), "       ")
    candidates = [c for c in flow.get("candidates") or [] if isinstance(c, dict)]
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
    verdict = str(flow.get("verdict") or "?").replace("_", " ")
    print(wrap(f"Verdict of this flow: {verdict}: {flow.get('explanation', '')}", "  "))


def deciding_flow(flows: list[dict[str, Any]]) -> int:
    """Which flow decides the case (as ``checklist.combine``: a prohibited flow first, then a
    permitted one, then one not covered)."""
    for label in ("prohibit", "permit", "not_applicable"):
        for number, flow in enumerate(flows):
            if flow.get("verdict") == label:
                return number
    return 0


def print_checklist(verdict: Verdict, *, every: bool = False) -> None:
    """The checklist methods' verdict: the verdict, every flow's checklist, then why, the norms
    it rests on, what would change it and (checklist-llm) the questions the model was asked."""
    checklist = verdict.checklist or {}
    flows = [f for f in checklist.get("flows") or [] if isinstance(f, dict)]
    decided = checklist.get("decided", True)
    blend = checklist.get("blend") if isinstance(checklist.get("blend"), dict) else None
    print(
        f"Verdict: {verdict.label.replace('_', ' ')}"
        + (
            ""
            if decided or blend
            else "  (on the facts as stated; it turns on facts the case does not state)"
        )
    )
    if blend:
        probabilities = blend.get("probabilities") or {}
        print(
            wrap(
                "A long narrative: weighed by the learned layer (fitted on synthetic cases) "
                "from the checklist below and the case's cues and retrieved norms: "
                + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in probabilities.items())
                + "; the checklist alone reads "
                + f"{str(blend.get('checklist_label')).replace('_', ' ')}.",
                "",
            )
        )
    print(
        wrap(
            f"Checklist ({verdict.method}; facts read with {checklist.get('parser', '?')}; "
            f"unknown facts weighed by the rule '{checklist.get('rule', '?')}'):",
            "",
        )
    )
    if not flows:
        print("  No flow of health information was read from the case.")
    deciding = deciding_flow(flows)
    for number, flow in enumerate(flows, start=1):
        print_flow_checklist(
            number,
            flow,
            every=every,
            deciding=len(flows) > 1 and number - 1 == deciding,
            alone=len(flows) == 1,
        )
    if checklist.get("explanation"):
        print(wrap(f"Why: {checklist['explanation']}", ""))
    print("Rests on: " + (", ".join(n.id for n in verdict.norms) or "none (not covered by HIPAA)"))
    for norm in verdict.norms:
        print(wrap(f"{norm.id}: {norm.text}", "  "))
    turns = [t for t in checklist.get("would_change") or [] if isinstance(t, dict)]
    print("What would change it:" + ("" if turns else " nothing the case leaves open"))
    for turn in turns:
        print(bullet(str(turn.get("text", ""))))
    asked = [a for a in checklist.get("asked") or [] if isinstance(a, dict)]
    if verdict.method == CHECKLIST_LLM:
        print(f"Asked the model ({verdict.llm or '?'}): {len(asked) or 'nothing'}")
        for item in asked:
            said = item.get("answer") or "no readable answer"
            line = f"flow {item.get('flow')}, {str(item.get('key')).replace('_', ' ')}: {said}"
            if item.get("accepted"):
                fact = item.get("fact") if isinstance(item.get("fact"), dict) else {}
                line += f": {_quoted(item.get('evidence'))}{_span(fact or {})} (accepted)"
            elif item.get("problem"):
                line += f" (not accepted: {item['problem']})"
            print(bullet(line))
    if verdict.failure:
        print(wrap(f"Failure: {verdict.failure}", ""))
    shown = {str(checklist.get("explanation") or "")} | {str(t.get("text")) for t in turns}
    rest = [s for s in verdict.reasoning if s not in shown and not s.startswith("Facts read")]
    if rest:
        print("Reasoning:")
    for step in rest:
        print(bullet(step))


def bullet(text: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent="  - ", subsequent_indent="    ")
