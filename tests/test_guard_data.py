"""The guard's labelled sets (issue 17, written ahead of the guard): every span where it says,
every label from the vocabulary, every purpose represented, so the guard is measured on sound
data when it lands."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

DATA = Path(__file__).parent / "data"
PURPOSES = {
    "claim",
    "referral",
    "attorney",
    "review_reply",
    "family",
    "employer",
    "research",
    "llm_prompt",
    "reminder",
    "to_patient",
}
# minimum necessary does not reach these: every span they carry is needed
EXEMPT = {"referral", "to_patient"}


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def test_every_draft_and_span_is_sound() -> None:
    drafts = _lines("guard_drafts.jsonl")
    assert len(drafts) >= 150 and len({d["id"] for d in drafts}) == len(drafts)
    counts = Counter(d["purpose"] for d in drafts)
    assert set(counts) == PURPOSES and min(counts.values()) >= 15
    for draft in drafts:
        assert draft["verdict"] in ("permit", "prohibit") and draft["text"].strip()
        assert draft["spans"], draft["id"]
        ends = sorted((s["start"], s["end"]) for s in draft["spans"])
        no_overlap = all(a[1] <= b[0] for a, b in itertools.pairwise(ends))
        assert no_overlap, draft["id"]
        for span in draft["spans"]:
            assert draft["text"][span["start"] : span["end"]] == span["text"], draft["id"]
            assert span["kind"] in ("identifier", "health") and isinstance(span["needed"], bool)
        if draft["purpose"] in EXEMPT:
            assert all(s["needed"] for s in draft["spans"]), draft["id"]
    spans = [s for d in drafts for s in d["spans"]]
    assert sum(not s["needed"] for s in spans) >= 100  # enough to measure removal


def test_every_conversation_is_sound() -> None:
    conversations = _lines("guard_conversations.jsonl")
    assert len(conversations) >= 30
    for conversation in conversations:
        assert conversation["purpose"] in PURPOSES
        turns = conversation["turns"]
        assert 3 <= len(turns) <= 7
        assert sum(t["stop"] for t in turns) <= 1
        assert all(bool(t["why"]) == t["stop"] for t in turns), conversation["id"]
