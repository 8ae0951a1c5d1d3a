"""The Guard page: paste a draft message (an email, a text, a prompt to an outside model, a
reply to a review), say who it goes to and what for, and read what may go: the flow and the
checklist's verdict, every span of protected health information highlighted (green: needed,
red: not needed for the purpose) with why and the norm, and the rewrite that keeps only what is
needed, re-checked. No LLM; the result downloads as JSON (the same as ``pcheck guard --json``).
"""

from __future__ import annotations

import html
import json
from typing import Any

import streamlit as st

from privacy_checklist.app.samples import DRAFTS
from privacy_checklist.app.ui import common

TEXT = "guard-text"
TO = "guard-to"
PURPOSE = "guard-purpose"
SENDER = "guard-sender"
SAMPLE = "guard-sample"
RESULT = "guard-result"
REWRITE = "guard-rewrite"
NONE = "(write your own)"
COLORS = {True: "#b2f2bb", False: "#ffa8a8", None: "#ffe066"}


def _sample() -> None:
    chosen = DRAFTS.get(st.session_state.get(SAMPLE, NONE))
    if chosen:
        st.session_state[TEXT] = chosen["text"]
        st.session_state[TO] = chosen["to"]
        st.session_state[PURPOSE] = chosen["purpose"]


def render() -> None:
    st.title("Guard a message")
    st.caption(
        "Before you press send: what may go, what must come out (minimum necessary, "
        "164.502(b)), and a safe rewrite. Nothing you paste leaves this machine."
    )
    st.selectbox("Sample draft", [NONE, *DRAFTS], key=SAMPLE, on_change=_sample)
    st.text_area("Draft message", key=TEXT, height=160, placeholder="Paste the message here")
    left, right = st.columns(2)
    left.text_input(
        "To (recipient)", key=TO, placeholder="the patient's health plan, ChatGPT, his daughter"
    )
    right.text_input(
        "Purpose", key=PURPOSE, placeholder="payment: submitting a claim, appointment reminder"
    )
    st.text_input("From (optional)", key=SENDER, placeholder="your own practice's staff")
    if st.button("Guard", key="guard-run", type="primary"):
        _run()
    result = st.session_state.get(RESULT)
    if result is not None:
        _show(result)


def _run() -> None:
    from privacy_checklist.reasoning.guard.message import GuardError

    text = st.session_state.get(TEXT, "")
    if not text.strip():
        st.session_state[RESULT] = None
        st.warning("Write or paste a message first.")
        return
    try:
        guarded = common.guard().check(
            text,
            to=st.session_state.get(TO) or None,
            purpose=st.session_state.get(PURPOSE) or None,
            sender=st.session_state.get(SENDER) or None,
        )
    except GuardError as exc:
        st.session_state[RESULT] = None
        st.warning(str(exc))
        return
    st.session_state[RESULT] = guarded.to_json()
    st.session_state[REWRITE] = guarded.rewrite or ""


def _show(result: dict[str, Any]) -> None:
    purpose = result["purpose"]
    if purpose["key"] is None:
        st.warning(f"The purpose was not read: {purpose['how']}")
    ok = result["verdict"] == "permit"
    (st.success if ok else st.error)(result["explanation"])
    flow = result["flow"]
    st.markdown(
        f"**Purpose:** {purpose['label'] or 'not read'}"
        + (f" ({common.node_link(purpose['norm'])})" if purpose.get("norm") else "")
        + f" — read from {common.md_escape(purpose['how'])}"
    )
    rests = ", ".join(common.node_link(n) for n in flow["rests_on"]) or "no norm"
    st.markdown(
        f"**The flow:** {common.md_escape(flow['summary'])}; the checklist: "
        f"**{flow['verdict']}** ({rests})"
    )
    st.caption(f"Minimum necessary {result['minimum_necessary']}")
    st.markdown("**The message, its protected health information marked**")
    st.markdown(_highlight(result), unsafe_allow_html=True)
    if result["spans"]:
        st.dataframe(
            [
                {
                    "words": s["text"],
                    "kind": s["kind"],
                    "type": s["type"],
                    "needed": {True: "yes", False: "NO", None: "?"}[s["needed"]],
                    "why": s["why"],
                    "norm": s["norm"],
                    "the law's item": s["law"],
                }
                for s in result["spans"]
            ],
            hide_index=True,
            use_container_width=True,
        )
    else:
        st.caption("No protected health information was read in it.")
    if result.get("rewrite") is not None:
        _show_rewrite(result)
    st.download_button(
        "The result as JSON",
        json.dumps(result, indent=2, ensure_ascii=False),
        file_name="guard.json",
        mime="application/json",
    )


def _show_rewrite(result: dict[str, Any]) -> None:
    st.markdown("**Rewrite** (what the purpose does not need taken out)")
    st.text_area("Rewrite", key=REWRITE, height=140, label_visibility="collapsed")
    check = result["recheck"] or {}
    if check.get("passed"):
        st.caption(
            f"Re-checked: no unneeded identifier left, every needed span kept; the rewrite "
            f"reads as **{check.get('verdict')}**."
        )
    else:
        st.warning(
            f"Re-check: {len(check.get('leaked', []))} unneeded identifier(s) left, "
            f"{len(check.get('dropped', []))} needed span(s) lost: read it before sending."
        )


def _highlight(result: dict[str, Any]) -> str:
    """The draft as HTML, each span in a mark coloured by whether the purpose needs it."""
    text = result.get("text") or st.session_state.get(TEXT, "")
    out: list[str] = []
    at = 0
    for span in sorted(result["spans"], key=lambda s: s["start"]):
        if span["start"] < at:
            continue
        out.append(html.escape(text[at : span["start"]]))
        color = COLORS[span["needed"]]
        tip = html.escape(f"{span['type']}: {span['why']}", quote=True)
        out.append(
            f'<mark style="background:{color}" title="{tip}">'
            f"{html.escape(text[span['start'] : span['end']])}</mark>"
        )
        at = span["end"]
    out.append(html.escape(text[at:]))
    return f'<div style="white-space:pre-wrap;line-height:1.8">{"".join(out)}</div>'
