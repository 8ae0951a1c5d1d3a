"""The structure model of a norm's type and its leave-one-section-out figure
(``pcheck annotate-eval --loso``), on the paper's expert annotations of the dev sections."""

from __future__ import annotations

import json
from pathlib import Path

from privacy_checklist.app.cli import main
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.kg.norms import PAPER_TYPES, RulesAnnotator, read_paper_file
from privacy_checklist.kg.structure import (
    features,
    fit,
    gold_types,
    leave_one_section_out,
    section_of,
)


def test_features_read_the_structure(shipped: KnowledgeBase) -> None:
    sale = features(shipped.tree, "164.502(a)(5)(ii)(A)")  # "... may not sell ..."
    assert sale["may_not_flow"] == 1.0 and sale["must_not"] == 0.0
    item = features(shipped.tree, "164.512(f)(1)(ii)(A)")  # an item of a list of permissions
    assert item["parent:colon_end"] == 1.0 or item["ancestor:may_flow"] == 1.0
    ruled = features(shipped.tree, "164.502(a)(5)(ii)(A)", RulesAnnotator(shipped.tree).own)
    assert ruled["rules:prohibit"] == 1.0


def test_no_section_is_typed_by_a_model_that_saw_it(shipped: KnowledgeBase, shared: Path) -> None:
    gold = read_paper_file(shared / "checklist" / "privacy_checklist_norms_dev.json")
    types = {k: v for k, v in gold_types(gold, PAPER_TYPES).items() if k in shipped.tree.nodes}
    result = leave_one_section_out(shipped.tree, types)
    sections = {section_of(k) for k in types}
    assert set(result["sections"]) == sections and len(sections) == 6
    assert result["pooled"]["n"] == len(types) == sum(s["n"] for s in result["sections"].values())
    # a model fitted on all the paragraphs reads them better than the held-out figure says
    everything = fit([features(shipped.tree, k) for k in types], list(types.values()))
    in_sample = sum(
        everything.predict(features(shipped.tree, k)) == v for k, v in types.items()
    ) / len(types)
    assert in_sample > result["pooled"]["accuracy"]


def test_cli_loso(shared: Path, capsys) -> None:
    gold = shared / "checklist" / "privacy_checklist_norms_dev.json"
    assert main(["annotate-eval", "--gold", str(gold), "--loso", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == 5
    for name, reading in out.items():
        assert set(reading) == (
            {"pooled", "sections", "switches"} if "chosen" in name else {"pooled", "sections"}
        )
        assert 0.0 <= reading["pooled"]["accuracy"] <= 1.0
