"""Sample case narratives, kept as data (``data/samples.json``) and read by both interfaces: the
browser's Check page offers them all, ``pcheck demo`` checks the one marked ``demo``; and sample
draft messages for the Guard page.

They are short narratives of our own, not taken from the court cases, one per kind of verdict.
"""

from __future__ import annotations

import json
from importlib import resources

SAMPLES_FILE = "samples.json"


def _read() -> tuple[dict[str, str], str]:
    """The samples, title to narrative in the file's order, and the demo's narrative."""
    raw = (
        resources.files("privacy_checklist.app")
        .joinpath("data", SAMPLES_FILE)
        .read_text(encoding="utf-8")
    )
    rows = json.loads(raw)["samples"]
    samples = {row["title"]: row["narrative"] for row in rows}
    demos = [row["narrative"] for row in rows if row.get("demo")]
    if len(samples) != len(rows) or len(demos) != 1:
        raise ValueError(f"data/{SAMPLES_FILE}: titles must differ and exactly one be the demo")
    return samples, demos[0]


SAMPLES, DEMO_CASE = _read()


def _drafts() -> dict[str, dict[str, str]]:
    """Sample draft messages for the Guard page: title to text, recipient and purpose."""
    raw = resources.files("privacy_checklist.app").joinpath("data", SAMPLES_FILE)
    rows = json.loads(raw.read_text(encoding="utf-8"))["drafts"]
    return {row["title"]: {k: row[k] for k in ("text", "to", "purpose")} for row in rows}


DRAFTS = _drafts()
