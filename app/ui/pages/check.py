"""The Check page: paste a case narrative (or pick a sample), choose a method, and read the
verdict (permitted / prohibited / not covered by HIPAA), the flows read from the case with
their words highlighted in it, the norms the verdict rests on, the retrieved norms, the
reasoning and, for LLM methods, the model's raw answers. The result downloads as JSON and as a
Markdown report (:func:`report_markdown`).

The checklist methods (the default, ``checklist``, and ``checklist-llm``) also show the
checklist (:func:`show_checklist`): the facts' words highlighted beside the flows', whether
HIPAA applies and why, the prohibitions met, each candidate permission with its conditions
met / unmet / unknown (✓ / ✗ / ?) beside the case's words and the law's, linked to their
paragraphs, and what would change the verdict.

The checklist and the offline reasoner need no LLM; the LLM methods are offered only when an
LLM is configured (``pcheck app --llm-base-url URL --llm-model NAME``, or
``PCHECK_LLM_BASE_URL`` and ``PCHECK_LLM_MODEL``).
"""

from __future__ import annotations

import html
import itertools
import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from privacy_checklist.app.samples import DEMO_CASE, SAMPLES
from privacy_checklist.app.ui import common
from privacy_checklist.reasoning.methods import DEFAULT_METHOD, OFFLINE_METHODS
from privacy_checklist.reasoning.verdict import CitedNorm, Reasoner, Verdict

if TYPE_CHECKING:
    from privacy_checklist.kg.conditions import Condition
    from privacy_checklist.reasoning.checklist.decide import Turn
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.checklist.report import CaseReport, FlowReport, NormReport
    from privacy_checklist.reasoning.reading.types import Fact, Flow, Part

PART_KINDS = ("sender", "recipient", "subject", "information", "purpose", "consent", "verb")
PART_COLORS = {
    "sender": "#ffc078",
    "recipient": "#74c0fc",
    "subject": "#b197fc",
    "information": "#8ce99a",
    "purpose": "#ffe066",
    "consent": "#faa2c1",
    "verb": "#ced4da",
    "fact": "#ffa8a8",
}
FACT = "fact"  # a fact the checklist read (its words), highlighted beside the flow parts
PART_NAMES = {"verb": "action"}
MARKS = {"met": "✓", "unmet": "✗", "unknown": "?"}
LABEL_TEXT = {
    "permit": "Permitted",
    "prohibit": "Prohibited",
    "not_applicable": "Not covered by HIPAA",
    "parse_failure": "No verdict (the model's answer could not be read)",
    "request_failure": "No verdict (the request to the LLM failed)",
}
LABEL_COLOR = {"permit": "green", "prohibit": "red", "not_applicable": "blue"}
METHOD_HELP = {
    "checklist": "checklist: ours, no LLM (each candidate norm's conditions checked)",
    "checklist-llm": "checklist-llm: the checklist, the model asked for the facts it left open",
    "offline": "offline: ours, no LLM (explainable features and a linear model)",
    "offline-fast": "offline-fast: ours, no LLM, without the sentence embedding (quicker)",
    "dp": "dp: direct prompt",
    "cot-auto": "cot-auto: the model plans its own steps",
    "cot-manual": "cot-manual: our Contextual Integrity guidelines step by step",
    "agent-id": "agent-id: the model names the paragraphs, checked against the regulation",
    "bm25-content": "bm25-content: BM25 retrieves paragraphs with the model's explanation",
    "ci-es-content": "ci-es-content: CI-ES retrieves paragraphs with the model's reading",
}
HITS_K = 10  # retrieval hits shown beside the verdict
HITS_METHOD = "hybrid"
SNIPPET = 160  # characters of a paragraph's text in a list
ONE_LINE = 300  # characters of an error message

NARRATIVE = "check-narrative"
SAMPLE = "check-sample"
METHOD = "check-method"
K = "check-k"
RESULT = "check-result"
ALL = "check-all-candidates"
TOP_CANDIDATES = 5  # candidate permissions shown per flow unless every one is asked for
OWN = "(write your own)"


# --------------------------------------------------------------------------- pure helpers


def one_line(exc: BaseException) -> str:
    """An exception as one short line (no traceback)."""
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return message if len(message) <= ONE_LINE else message[: ONE_LINE - 1] + "…"


def part_name(kind: str) -> str:
    return PART_NAMES.get(kind, kind)


def _flat(text: Any) -> str:
    return " ".join(str(text or "").split())


def _snippet(text: Any, width: int = SNIPPET) -> str:
    flat = _flat(text)
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def part_span(text: str, part: Part | None) -> tuple[int, int] | None:
    """Where a flow part's words are in the narrative: its own span when it holds those words,
    else their first occurrence, else None (not in the text)."""
    if part is None:
        return None
    words, start, end = part.text, part.start, part.end
    if 0 <= start < end <= len(text) and (not words or text[start:end] == words):
        return start, end
    if words.strip():
        found = text.find(words)
        if found >= 0:
            return found, found + len(words)
    return None


def _mark(kind: str, inner: str, title: str) -> str:
    return (
        f'<mark style="background:{PART_COLORS[kind]};color:#111;padding:0 2px;'
        f'border-radius:3px" title="{html.escape(title, quote=True)}">{inner}</mark>'
    )


def _html_text(text: str) -> str:
    """Narrative text safe inside one HTML block of ``st.markdown``: escaped, one line."""
    return html.escape(text).replace("$", "&#36;").replace("\r\n", "\n").replace("\n", "<br>")


def highlight_html(text: str, flows: Sequence[Flow], facts: Sequence[Fact] = ()) -> str:
    """The narrative as HTML with each flow part's words in a coloured ``<mark>`` (one colour
    per kind of part; the innermost part wins where they overlap; the tooltip names them all),
    and the words of each of ``facts`` (the checklist's, with a span) in the fact colour.
    Everything from the narrative is HTML-escaped."""
    spans: dict[tuple[int, int, str], list[str]] = {}
    for fact in facts:
        if not 0 <= fact.start < fact.end <= len(text):
            continue
        said = "yes" if fact.value else "no" if fact.value is False else "?"
        spans.setdefault((fact.start, fact.end, FACT), []).append(
            f"{fact.key.replace('_', ' ')}: {said}" + (f" ({fact.source})" if fact.source else "")
        )
    for number, flow in enumerate(flows, start=1):
        for kind, part in flow.parts().items():
            where = part_span(text, part)
            if where is None:
                continue
            spans.setdefault((*where, kind), []).append(
                f"{part_name(kind)} (flow {number})"
                + (f": {part.resolved}" if part.resolved else "")
            )
    bounds = sorted({0, len(text), *(s[0] for s in spans), *(s[1] for s in spans)})
    out = []
    for start, end in itertools.pairwise(bounds):
        inner = _html_text(text[start:end])
        covering = [s for s in spans if s[0] <= start and s[1] >= end]
        if not covering:
            out.append(inner)
            continue
        chosen = min(covering, key=lambda s: (s[1] - s[0], _kind_order(s[2])))
        title = "; ".join(line for s in sorted(covering) for line in spans[s])
        out.append(_mark(chosen[2], inner, title))
    return '<div style="line-height:1.9">' + "".join(out) + "</div>"


def _kind_order(kind: str) -> int:
    return PART_KINDS.index(kind) if kind in PART_KINDS else len(PART_KINDS)


def legend_html(kinds: Sequence[str] = PART_KINDS) -> str:
    return " ".join(_mark(kind, part_name(kind), part_name(kind)) for kind in kinds)


def flow_table(flow: Flow, text: str | None = None) -> str:
    """A Markdown table of one flow's parts: the words, the law's term, where they are."""
    rows = ["| part | words in the case | the law's term | where |", "|---|---|---|---|"]
    for kind, part in flow.parts().items():
        if not part.text.strip():
            continue
        span: tuple[int, int] | None = None
        if text is not None:
            span = part_span(text, part)
        elif part.start >= 0:
            span = (part.start, part.end)
        where = f"{span[0]}–{span[1]}" if span else "not in the text"
        resolved = _flat(part.resolved)
        rows.append(
            f"| {part_name(kind)} | {common.md_escape(_flat(part.text))} | "
            f"{common.md_escape(resolved) if resolved else '—'} | {where} |"
        )
    return "\n".join(rows) if len(rows) > 2 else "_No part of this flow was read._"


def flow_title(number: int, flow: Flow) -> str:
    said = _flat(flow.verb.text) if flow.verb is not None else ""
    return f"Flow {number}" + (f": “{common.md_escape(said)}”" if said else "")


def norm_lines(norms: Sequence[CitedNorm]) -> list[str]:
    """Markdown list items: each norm's id as a link to its paragraph, its type and text."""
    lines = []
    for norm in norms:
        kind = f" ({norm.norm_type})" if norm.norm_type else ""
        text = _snippet(norm.text, 600)
        lines.append(
            f"- {common.node_link(norm.id)}{kind}" + (f": {common.md_escape(text)}" if text else "")
        )
    return lines


def label_text(label: Any) -> str:
    return LABEL_TEXT.get(str(label), str(label).replace("_", " "))


def _verdict(verdict: Verdict | Mapping[str, Any]) -> Verdict:
    """A verdict, or its JSON (as kept in the session and logged) read back."""
    return verdict if isinstance(verdict, Verdict) else Verdict.from_json(verdict)


def _asked_a_model(verdict: Verdict) -> bool:
    return verdict.method not in ("", *OFFLINE_METHODS)


def report_markdown(
    text: str, verdict: Verdict | Mapping[str, Any], hits: Sequence[dict[str, Any]] | None = None
) -> str:
    """A Markdown report of a check: the verdict, the case, the norms it rests on, the flows,
    the reasoning, the retrieved norms and (LLM methods) the raw answers."""
    found = _verdict(verdict)
    label = found.label
    out = [
        "# Privacy check",
        "",
        f"**Verdict: {label_text(label)}** (`{label}`)",
        "",
        f"- Method: {found.method or 'offline'}" + (f" ({found.llm})" if found.llm else ""),
    ]
    if found.probabilities:
        out.append(
            "- Probabilities: "
            + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in found.probabilities.items())
        )
    if found.failure:
        out.append(f"- Failure: {_flat(found.failure)}")
    out += ["", "## The case", ""]
    out += [f"> {line}" if line.strip() else ">" for line in text.splitlines()] or [">"]
    out += ["", "## The norms it rests on", ""]
    if found.norms:
        for norm in found.norms:
            kind = f" ({norm.norm_type})" if norm.norm_type else ""
            out.append(f"- **{norm.id}**{kind}: {_flat(norm.text)}".rstrip(": "))
    else:
        out.append(
            "None: not covered by HIPAA."
            if label == "not_applicable"
            else "No paragraph was named."
        )
    out += ["", "## The flows", ""]
    if not found.flows:
        out.append("No flow was read from the case.")
    for number, flow in enumerate(found.flows, start=1):
        verb = flow.verb.text if flow.verb is not None else ""
        out += [
            f"### Flow {number}" + (f": “{_flat(verb)}”" if verb else ""),
            "",
            "| part | words in the case | the law's term | where |",
            "|---|---|---|---|",
        ]
        for kind, part in flow.parts().items():
            if not part.text.strip():
                continue
            span = part_span(text, part)
            cells = [
                part_name(kind),
                _flat(part.text).replace("|", "\\|"),
                _flat(part.resolved).replace("|", "\\|") or "—",
                f"{span[0]}–{span[1]}" if span else "not in the text",
            ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if found.checklist is not None:
        out += ["", *checklist_markdown(found.checklist, text)]
    out += ["", "## Reasoning", ""]
    out += [f"- {_flat(step)}" for step in found.reasoning] or ["(none given)"]
    if hits:
        out += ["", f"## Retrieved norms ({HITS_METHOD})", ""]
        out += [
            f"{rank}. {h.get('node')} (score {float(h.get('score') or 0):.4f}"
            + (f", {h['norm_type']}" if h.get("norm_type") else "")
            + ")"
            for rank, h in enumerate(hits, start=1)
        ]
    if found.calls or (_asked_a_model(found) and found.raw):
        out += ["", "## The model's raw answers", ""]
        if not found.calls:
            out += ["```text", found.raw, "```"]
        for call in found.calls:
            out += [
                f"### {call.step or 'answer'}",
                "",
                "```text",
                call.text if call.text is not None else f"(no answer: {call.error})",
                "```",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def _fact_words(fact: Fact, text: str) -> str:
    if fact.value is None:
        return "not stated"
    words = fact.evidence
    if 0 <= fact.start < fact.end <= len(text):
        words = text[fact.start : fact.end] + f" ({fact.start}–{fact.end})"
    return ("yes" if fact.value else "no") + (f": “{_flat(words)}”" if words else "")


def checklist_markdown(checklist: CaseReport, text: str) -> list[str]:
    """The checklist as Markdown lines for the report: each flow's applicability, prohibitions
    met and first candidates with their conditions, then what would change the verdict."""
    out = ["## The checklist", ""]
    if not checklist.flows:
        out.append("No flow of health information was read from the case.")
    for number, flow in enumerate(checklist.flows, start=1):
        where = flow.applicability
        out += [
            f"### Flow {number}: {_flat(flow.flow.summary)} ({label_text(flow.label)})",
            "",
            f"- Applicability: {'covered' if where.applies else 'not covered'} by HIPAA: "
            f"{_flat(where.reason)}",
        ]
        if not where.applies:
            out.append("")
            continue
        out.append(
            "- Prohibitions met: " + (", ".join(p.node for p in flow.prohibitions) or "none")
        )
        out.append(f"- Candidate permissions: {len(flow.candidates)}")
        for check in flow.candidates[:TOP_CANDIDATES]:
            out.append(
                f"  - {MARKS.get(check.status, '?')} **{check.node}** ({check.status}): "
                f"{_flat(check.summary)}"
            )
            for condition in check.conditions:
                law = condition.condition
                presumed = ", presumed" if condition.presumed else ""
                out.append(
                    f"    - {MARKS.get(condition.status, '?')} {law.kind.replace('_', ' ')} "
                    f"({law.mode}{presumed}): the case: {_fact_words(condition.fact, text)}; "
                    f"the law: “{_flat(law.quote)}” ({law.node})"
                )
        out.append("")
    out += ["### What would change it", ""]
    out += [f"- {_flat(t.text)}" for t in checklist.turns] or ["Nothing the case leaves open."]
    return out


# --------------------------------------------------------------------------- engine


def _llm_env() -> tuple[str, str]:
    return (
        os.environ.get("PCHECK_LLM_BASE_URL") or "",
        os.environ.get("PCHECK_LLM_MODEL") or "",
    )


@st.cache_resource(show_spinner="Preparing the method ...", max_entries=16)
def _llm_method(name: str, k: int, base_url: str, model: str) -> Reasoner:
    from privacy_checklist.reasoning.llm.client import build_client
    from privacy_checklist.reasoning.methods import build_method

    client = build_client("openai", base_url or None, model or None)
    return build_method(name, common.kb(), common.index(), client, k=k)


def checklist_reasoner() -> ChecklistReasoner:
    """The checklist reasoner over the page's knowledge base (its norms the store's view)."""
    return _checklist_reasoner(os.environ.get("PCHECK_KB") or "", str(common.store_path()))


@st.cache_resource(show_spinner="Loading the checklist and the parser ...")
def _checklist_reasoner(where: str, store: str) -> ChecklistReasoner:
    """Built once per knowledge base and store (``common.kb()`` is cached by the same two)."""
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    return ChecklistReasoner(common.kb())


def reasoner(name: str, k: int) -> Reasoner:
    """The method's pipeline, built once per server (the offline reasoner is shared)."""
    if name == "checklist":
        return checklist_reasoner()
    if name == "offline":
        return common.offline_reasoner()
    if name == "offline-fast":
        return common.offline_reasoner(fast=True)
    return _llm_method(name, k, *_llm_env())


def retrieval_hits(text: str, k: int = HITS_K) -> list[dict[str, Any]]:
    """The top hits of the retrieval index for the case, with their norm type and text."""
    kb = common.kb()
    hits = common.index().search(text, HITS_METHOD, k)
    out = []
    for hit in hits:
        norm = kb.norms.get(hit.node)
        node = kb.tree.get(hit.node)
        out.append(
            {
                **hit.to_json(),
                "norm_type": norm.norm_type if norm else "",
                "text": node.text if node else "",
            }
        )
    return out


def run_check(text: str, method: str, k: int) -> dict[str, Any]:
    """Check the narrative; the result kept in the session (or an ``error`` line)."""
    notices = []
    if len(text) > common.MAX_CASE_CHARS:
        notices.append(
            f"The narrative has {len(text):,} characters; only the first "
            f"{common.MAX_CASE_CHARS:,} were checked."
        )
        text = text[: common.MAX_CASE_CHARS]
    started = time.perf_counter()
    try:
        verdict = reasoner(method, k).check(text)
        hits = retrieval_hits(text)
    except Exception as exc:  # the engine's errors are shown as one line, never a traceback
        return {"error": one_line(exc), "method": method}
    from privacy_checklist.reasoning.learned.offline import FLOW_CHARS
    from privacy_checklist.retrieval.base import MAX_QUERY_CHARS

    if len(text) > min(FLOW_CHARS, MAX_QUERY_CHARS):
        notices.append(
            f"A narrative over {min(FLOW_CHARS, MAX_QUERY_CHARS):,} characters is long: the "
            f"retrieval reads its first {MAX_QUERY_CHARS:,} characters"
            + ("" if verdict.flows else ", and no flows were read from it")
            + "."
        )
    return {
        "text": text,
        "method": method,
        "verdict": verdict.to_json(),
        "hits": hits,
        "seconds": time.perf_counter() - started,
        "notices": notices,
    }


def result_json(result: dict[str, Any]) -> str:
    data = {
        **result["verdict"],
        "narrative": result["text"],
        "retrieval": {"method": HITS_METHOD, "hits": result["hits"]},
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


# --------------------------------------------------------------------------- page


def _on_sample() -> None:
    chosen = st.session_state.get(SAMPLE)
    if chosen in SAMPLES:
        st.session_state[NARRATIVE] = SAMPLES[chosen]


def _methods() -> list[str]:
    from privacy_checklist.reasoning.methods import METHODS

    return list(METHODS) if common.llm_configured() else list(OFFLINE_METHODS)


def _check(text: str) -> dict[str, Any]:
    """What the Check button gives: a warning for an empty narrative, else the result."""
    if not text.strip():
        return {"warning": "Write or paste a case narrative first, or pick a sample."}
    method = st.session_state.get(METHOD) or DEFAULT_METHOD
    if method not in _methods():
        method = DEFAULT_METHOD
    k = int(st.session_state.get(K) or 5)
    return {**run_check(text, method, k), "input": text}


def render() -> None:
    st.title("Check a case")
    st.caption(
        "Is a flow of health information permitted, prohibited, or not covered by HIPAA? "
        "Describe who shares what with whom, and why."
    )
    st.selectbox(
        "Sample cases",
        [OWN, *SAMPLES],
        key=SAMPLE,
        on_change=_on_sample,
        help="Short narratives written for this page (not the court cases).",
    )
    text = st.text_area(
        "Case narrative",
        key=NARRATIVE,
        height=180,
        placeholder="e.g. " + DEMO_CASE,
    )
    length = len(text or "")
    if length > common.MAX_CASE_CHARS:
        st.caption(
            f":orange[{length:,} characters: only the first {common.MAX_CASE_CHARS:,} will be "
            "checked.]"
        )
    elif length:
        st.caption(f"{length:,} characters")

    from privacy_checklist.reasoning.methods import DEFAULT_K, RETRIEVAL_METHODS

    methods = _methods()
    if st.session_state.get(METHOD) not in methods:
        st.session_state[METHOD] = DEFAULT_METHOD
    left, right = st.columns([3, 1])
    with left:
        method = st.selectbox(
            "Method", methods, key=METHOD, format_func=lambda m: METHOD_HELP.get(m, m)
        )
    with right:
        if method in RETRIEVAL_METHODS:
            st.number_input("Paragraphs retrieved (k)", 1, 20, DEFAULT_K, key=K)
    if not common.llm_configured():
        st.caption(
            "The LLM methods (checklist-llm, dp, cot-auto, cot-manual, agent-id, bm25-content, "
            "ci-es-content) "
            "need an LLM: start the app with `pcheck app --llm-base-url URL --llm-model NAME` "
            "(or set `PCHECK_LLM_BASE_URL` and `PCHECK_LLM_MODEL`). Any OpenAI-compatible "
            "endpoint works."
        )
    # load the knowledge base and the chosen offline method now, not on the first check
    if method in OFFLINE_METHODS:
        try:
            reasoner(method, DEFAULT_K)
        except Exception as exc:
            st.error(f"The {method} method cannot be loaded: {one_line(exc)}")
    if st.button("Check", type="primary", key="check-run"):
        with st.spinner("Checking ..."):
            st.session_state[RESULT] = _check(text or "")

    result = st.session_state.get(RESULT)
    if not result:
        return
    if result.get("warning"):
        st.warning(result["warning"])
        return
    if result.get("error"):
        st.error(f"The check failed ({result['method']}): {result['error']}")
        return
    try:
        show_result(result)
    except Exception as exc:  # a malformed result (e.g. an odd LLM answer) never gives a traceback
        st.error(f"The result cannot be shown: {one_line(exc)}")


def show_result(result: dict[str, Any]) -> None:
    verdict, text = _verdict(result["verdict"]), result["text"]
    for notice in result.get("notices", []):
        st.warning(notice)
    if result.get("input") is not None and result["input"] != st.session_state.get(NARRATIVE):
        st.caption("The narrative has changed since this check: press Check again.")
    label = verdict.label
    color = LABEL_COLOR.get(label, "orange")
    st.markdown(f"## Verdict: :{color}[**{label_text(label)}**]")
    st.caption(
        f"`{label}` by the {result['method']} method"
        + (f" ({verdict.llm})" if verdict.llm else "")
        + f", in {result['seconds']:.2f} s"
    )
    if verdict.failure:
        st.warning(f"Why there is no verdict: {_flat(verdict.failure)}")
    if verdict.probabilities:
        columns = st.columns(len(verdict.probabilities))
        for column, (name, value) in zip(columns, verdict.probabilities.items(), strict=True):
            column.metric(label_text(name), f"{value:.0%}")
            column.progress(min(1.0, max(0.0, value)))

    checklist = verdict.checklist
    facts = _checklist_facts(checklist) if checklist is not None else []
    st.subheader("The flows in the case")
    st.markdown(
        legend_html((*PART_KINDS, FACT) if checklist is not None else PART_KINDS),
        unsafe_allow_html=True,
    )
    # a long narrative scrolls in its own panel instead of pushing everything else down
    panel = st.container(height=420) if len(text) > 3_000 else st.container()
    panel.markdown(highlight_html(text, verdict.flows, facts), unsafe_allow_html=True)
    if not verdict.flows:
        st.caption("No flow (who sends what to whom) was read from the case.")
    for number, flow in enumerate(verdict.flows, start=1):
        st.markdown(f"**{flow_title(number, flow)}**")
        st.markdown(flow_table(flow, text))

    if checklist is not None:
        show_checklist(checklist, verdict, text)

    st.subheader("What the verdict rests on")
    lines = norm_lines(verdict.norms)
    if lines:
        st.markdown("\n".join(lines))
    elif label == "not_applicable":
        st.markdown("No paragraph: the case is not covered by HIPAA.")
    else:
        st.markdown("No paragraph was named.")

    st.subheader("Reasoning")
    steps = [_flat(s) for s in verdict.reasoning]
    st.markdown("\n".join(f"- {common.md_escape(s)}" for s in steps) or "(none given)")

    if verdict.retrieved:
        st.subheader("Paragraphs the method retrieved")
        st.markdown(
            hits_table([{**h.to_json(), "via": h.via or h.method} for h in verdict.retrieved])
        )
    checks = [c for c in verdict.details.get("rule_checks") or [] if isinstance(c, dict)]
    if checks:
        st.markdown(
            "\n".join(
                f"- {common.node_link(str(c.get('id')))}: {c.get('judgment') or 'failed'}"
                + (f" — {common.md_escape(_flat(c['reasoning']))}" if c.get("reasoning") else "")
                for c in checks
            )
        )
    st.subheader(f"Norms retrieved for the case ({HITS_METHOD}, top {HITS_K})")
    if result["hits"]:
        st.markdown(hits_table(result["hits"]))
    else:
        st.markdown("No norm matched the case's words.")

    if verdict.calls:
        st.subheader("The model's raw answers")
        for call in verdict.calls:
            step = call.step or "answer"
            with st.expander(
                f"{step}" + (" (from the cache)" if call.cached else ""), expanded=True
            ):
                st.code(
                    call.text if call.text is not None else f"(no answer: {call.error})",
                    language="text",
                    wrap_lines=True,
                )
                if call.messages:
                    st.caption("The prompt")
                    st.json(call.messages, expanded=False)

    st.subheader("Download")
    left, right = st.columns(2)
    left.download_button(
        "The result as JSON",
        result_json(result),
        file_name="privacy-check.json",
        mime="application/json",
        on_click="ignore",
        key="check-download-json",
    )
    right.download_button(
        "The report as Markdown",
        report_markdown(text, verdict, result["hits"]),
        file_name="privacy-check.md",
        mime="text/markdown",
        on_click="ignore",
        key="check-download-md",
    )


def hits_table(hits: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of retrieval hits (``node`` or ``id``, score, type, text, found by)."""
    rows = ["| # | paragraph | score | type | text | found by |", "|---|---|---|---|---|---|"]
    kb = None
    for rank, hit in enumerate(hits, start=1):
        node = str(hit.get("node") or hit.get("id"))
        kind, text = hit.get("norm_type"), hit.get("text")
        if kind is None or text is None:
            if kb is None:
                kb = common.kb()
            norm = kb.norms.get(node)
            kind = kind if kind is not None else (norm.norm_type if norm else "")
            if text is None:
                found = kb.tree.get(node)
                text = found.text if found else ""
        rows.append(
            f"| {rank} | {common.node_link(node)} | {float(hit.get('score') or 0):.4f} | "
            f"{kind or '—'} | {common.md_escape(_snippet(text, 110))} | "
            f"{common.md_escape(_flat(hit.get('via'))) or '—'} |"
        )
    return "\n".join(rows)


# --------------------------------------------------------------------------- the checklist


def _checklist_facts(checklist: CaseReport) -> list[Fact]:
    """The facts of every flow of a checklist that the case states, with their spans."""
    flows = checklist.flows or ((checklist.deciding,) if checklist.deciding else ())
    return [
        fact
        for flow in flows
        for fact in flow.flow.facts.values()
        if fact.value is not None and fact.start >= 0
    ]


def fact_cell(fact: Fact | None, text: str | None = None) -> str:
    """The words of the case behind a fact, for a Markdown cell: yes/no, the words, where."""
    if fact is None or fact.value is None:
        return "not stated"
    said = "yes" if fact.value else "no"
    words = ""
    if text is not None and 0 <= fact.start < fact.end <= len(text):
        words = text[fact.start : fact.end]
    words = words or fact.evidence
    where = f" ({fact.start}–{fact.end})" if fact.start >= 0 else ""
    source = f", {fact.source}" if fact.source else ""
    if not words:
        return f"{said}{source}"
    return f"{said}: “{common.md_escape(_flat(words))}”{where}{source}"


def _condition_mode(condition: Condition) -> str:
    if condition.mode == "one_of":
        return f"one of ({common.md_escape(condition.group)})"
    return condition.mode


def conditions_table(check: NormReport, text: str | None = None) -> str:
    """A Markdown table of a norm's conditions: ✓ / ✗ / ?, the kind, its mode, the words of the
    case that decided it and the words of the law that state it (linked to their paragraph)."""
    rows = [
        "| | condition | mode | the case's words | the law's words |",
        "|---|---|---|---|---|",
    ]
    for condition in check.conditions:
        law, fact, status = condition.condition, condition.fact, condition.status
        note = " (presumed)" if condition.presumed else ""
        if law.mode == "exception" and fact.start < 0 and fact.value is None:
            note += " (counts only when stated)"
        quoted = (f"“{common.md_escape(_flat(law.quote))}”" if law.quote else "—") + (
            f" {common.node_link(law.node)}" if law.node else ""
        )
        rows.append(
            f"| {MARKS.get(status, '?')} {status}{note} | "
            f"{common.md_escape(law.kind.replace('_', ' '))} | "
            f"{_condition_mode(law)} | {fact_cell(fact, text)} | {quoted} |"
        )
    return "\n".join(rows) if len(rows) > 2 else "_No condition._"


def _norm_title(check: NormReport) -> str:
    summary = _snippet(check.summary, 110)
    return f"{MARKS.get(check.status, '?')} {check.node}: {check.status}" + (
        f" — {summary}" if summary else ""
    )


def _turn_line(turn: Turn) -> str:
    return (
        f"- **{label_text(turn.then)}**"
        + (f" under {common.node_link(turn.node)}" if turn.node else "")
        + f": {common.md_escape(_flat(turn.text))}"
    )


def show_flow_checklist(flow: FlowReport, text: str, every: bool) -> None:
    """One flow's checklist: applicability and why, prohibitions met, the candidates."""
    where = flow.applicability
    reason = common.md_escape(_flat(where.reason))
    st.markdown(
        f"**1. Applicability:** {'✓ covered' if where.applies else '✗ not covered'} by HIPAA: "
        f"{reason}"
    )
    stated = [f for f in flow.flow.facts.values() if f.value is not None]
    if stated:
        rows = ["| fact | the case's words |", "|---|---|"]
        for fact in stated:
            key = common.md_escape(fact.key.replace("_", " "))
            rows.append(f"| {key} | {fact_cell(fact, text)} |")
        st.markdown("\n".join(rows))
    if not where.applies:
        return
    st.markdown(f"**2. Prohibitions met:** {len(flow.prohibitions) or 'none'}")
    for check in flow.prohibitions:
        with st.expander(f"! {check.node}: {_snippet(check.summary, 110)}"):
            st.markdown(f"The paragraph: {common.node_link(check.node)}")
            st.markdown(conditions_table(check, text))
    candidates = flow.candidates
    shown = candidates if every else candidates[:TOP_CANDIDATES]
    st.markdown(
        f"**3. Candidate permissions:** {len(candidates)}"
        + (
            f" (the first {len(shown)} in the checklist's order)"
            if len(shown) < len(candidates)
            else ""
        )
    )
    if not candidates:
        st.markdown("No permission fits this sender, recipient and information (164.502(a)).")
    for number, check in enumerate(shown):
        with st.expander(_norm_title(check), expanded=number == 0):
            fits = f" ({common.md_escape(check.fits)})" if check.fits else ""
            st.markdown(f"The paragraph: {common.node_link(check.node)}{fits}")
            if check.set_aside:
                st.markdown(f"✗ Set aside: {common.md_escape(check.set_aside)}")
            st.markdown(conditions_table(check, text))


def show_checklist(checklist: CaseReport, verdict: Verdict, text: str) -> None:
    """The checklist of a checklist method's verdict (see the module docstring)."""
    st.subheader("The checklist")
    st.caption(
        f"Facts read with {checklist.parser or '?'}; a fact the case does not state is "
        f"weighed by the rule '{checklist.rule or '?'}'. ✓ met, ✗ unmet, ? unknown."
    )
    every = st.checkbox("Show every candidate permission", key=ALL)
    flows = checklist.flows
    if not flows:
        st.markdown("No flow of health information was read from the case.")
    for number, flow in enumerate(flows, start=1):
        if len(flows) > 1:
            st.markdown(
                f"#### Flow {number}: {common.md_escape(_flat(flow.flow.summary))} — "
                f"{label_text(flow.label)}"
            )
        show_flow_checklist(flow, text, every)
    st.markdown(f"**The verdict:** {common.md_escape(_flat(checklist.explanation))}")
    if flows and not checklist.decided:
        st.caption(
            "The verdict is on the facts as stated: it turns on facts the case does not state."
        )
    turns = checklist.turns
    st.markdown("**What would change it:**" + ("" if turns else " nothing the case leaves open."))
    if turns:
        st.markdown("\n".join(_turn_line(t) for t in turns))
    asked = checklist.asked or ()
    if asked or verdict.method == "checklist-llm":
        st.markdown(f"**Questions asked of the model:** {len(asked) or 'none'}")
        if asked:
            rows = [
                "| flow | fact | answer | the case's words | accepted |",
                "|---|---|---|---|---|",
            ]
            for item in asked:
                accepted = (
                    "yes"
                    if item.accepted
                    else (f"no: {common.md_escape(_flat(item.problem))}" if item.problem else "no")
                )
                rows.append(
                    f"| {item.question.flow + 1} | "
                    f"{common.md_escape(item.question.key.replace('_', ' '))} | "
                    f"{common.md_escape(item.answer or '—')} | "
                    f"{common.md_escape(_snippet(item.evidence, 120)) or '—'} | {accepted} |"
                )
            st.markdown("\n".join(rows))
