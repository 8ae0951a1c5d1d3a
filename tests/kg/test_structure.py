"""``pcheck annotate-eval --loso``: the rules annotator per section of the paper's expert
annotations, in-sample and with its switches chosen on the other sections."""

from __future__ import annotations

import json
from pathlib import Path

from privacy_checklist.app.cli import main


def test_cli_loso(shared: Path, capsys) -> None:
    gold = shared / "checklist" / "privacy_checklist_norms_dev.json"
    assert main(["annotate-eval", "--gold", str(gold), "--loso", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 3
    for name, reading in out.items():
        assert set(reading) == (
            {"pooled", "sections", "switches"} if "chosen" in name else {"pooled", "sections"}
        )
        assert 0.0 <= reading["pooled"]["accuracy"] <= 1.0
        assert len(reading["sections"]) == 6
    chosen = next(r for name, r in out.items() if "chosen" in name)
    assert chosen["pooled"]["accuracy"] >= 0.8  # 0.842 when the switches came in
