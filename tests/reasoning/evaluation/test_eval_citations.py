"""``pcheck eval``'s figures against the cases' gold regulations (issue 14): how often a cited
norm's section is a gold section, how often a cited norm is a gold paragraph or its ancestor or
descendant, and the accuracy by first gold regulation."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.reasoning.evaluation.harness import (
    accuracy_by,
    citation_hits,
    gold_references,
    markdown_details,
    markdown_table,
    metrics,
    read_log,
    run,
)
from tests.conftest import DATA

REGRESSION = DATA / "checklist_regression.csv"


def norms(*ids: str) -> list[dict[str, str]]:
    return [{"id": i, "text": "", "norm_type": "permit"} for i in ids]


# A log with known citations; the gold regulations come from the case file (GOLD) or, for a
# case GOLD lacks, from the record (an older run's log).
RECORDS = [
    # the cited paragraph lies under the gold one: section and paragraph found
    {"case_id": "a", "gold": "permit", "verdict": "permit", "norms": norms("164.512(f)(1)(ii)")},
    # the cited paragraph is an ancestor of the gold one: both found
    {"case_id": "b", "gold": "prohibit", "verdict": "prohibit", "norms": norms("164.502(a)")},
    # same section, another paragraph: the section only
    {"case_id": "c", "gold": "prohibit", "verdict": "permit", "norms": norms("164.502(b)")},
    # another section, and a part (no paragraph: it finds nothing)
    {
        "case_id": "d",
        "gold": "permit",
        "verdict": "prohibit",
        "norms": norms("164.510(b)", "Part 164"),
    },
    # gold regulations but no norm cited: not scored
    {"case_id": "e", "gold": "permit", "verdict": "permit", "norms": []},
    # a norm cited but no gold regulation: not scored
    {"case_id": "f", "gold": "not_applicable", "verdict": "permit", "norms": norms("160.103")},
    # an LLM request failed: not a case of any figure
    {"case_id": "g", "gold": "permit", "verdict": "request_failure", "norms": []},
    # an older log: the norm as an id alone, written as the law writes it; gold in the record
    {
        "case_id": "h",
        "gold": "permit",
        "verdict": "permit",
        "norms": ["45 CFR 164.508(a)(1)"],
        "gold_refs": ["164.508(a)"],
    },
]
GOLD = {
    "a": ["164.512(f)"],
    "b": ["164.502(a)(1)(iv)", "164.506(c)"],
    "c": ["164.502(a)"],
    "d": ["164.512(f)"],
    "e": ["164.506(c)"],
    "f": [],
    "g": ["164.502(a)"],
}


def test_citation_figures_on_a_known_log() -> None:
    result = metrics(RECORDS, GOLD)
    cited = result["citations"]
    # scored: a, b, c, d, h; section found in a, b, c, h; paragraph in a, b, h
    assert (cited["n"], cited["section_hits"], cited["paragraph_hits"]) == (5, 4, 3)
    assert cited["section"] == 0.8 and cited["paragraph"] == 0.6
    assert cited["not_scored"] == {"total": 2, "no_gold_refs": 1, "no_citation": 1}
    assert cited["per_label"]["permit"] == {
        "n": 3,
        "section": 0.6667,
        "paragraph": 0.6667,
        "section_hits": 2,
        "paragraph_hits": 2,
    }
    assert cited["per_label"]["prohibit"] == {
        "n": 2,
        "section": 1.0,
        "paragraph": 0.5,
        "section_hits": 2,
        "paragraph_hits": 1,
    }
    assert cited["per_label"]["not_applicable"]["n"] == 0
    assert cited["per_label"]["not_applicable"]["section"] is None


def test_accuracy_by_first_gold_regulation() -> None:
    result = metrics(RECORDS, GOLD)
    assert result["by_norm"] == {
        "164.502(a)": {"n": 1, "accuracy": 0.0},  # c
        "164.502(a)(1)(iv)": {"n": 1, "accuracy": 1.0},  # b
        "164.506(c)": {"n": 1, "accuracy": 1.0},  # e
        "164.508(a)": {"n": 1, "accuracy": 1.0},  # h, from its record
        "164.512(f)": {"n": 2, "accuracy": 0.5},  # a right, d wrong
    }
    assert accuracy_by([("x", True), ("y", False), ("x", False)]) == {
        "x": {"n": 2, "accuracy": 0.5},
        "y": {"n": 1, "accuracy": 0.0},
    }


def test_the_case_file_overrides_the_logged_gold_regulations() -> None:
    record = {**RECORDS[-1], "gold_refs": ["164.512(f)"]}
    assert metrics([record])["citations"]["section_hits"] == 0
    assert metrics([record], {"h": ["164.508"]})["citations"]["paragraph_hits"] == 1


@pytest.mark.parametrize(
    ("cited", "gold", "found"),
    [
        (["164.512(f)(1)(ii)"], ["164.512"], (True, True)),  # a section is every paragraph's
        (["164.512(f)(1)"], ["164.512(f)(2)"], (True, False)),  # siblings
        (["164.512(f)"], ["164.512(e)(1)"], (True, False)),
        (["164.502(a)"], ["164.502(a)"], (True, True)),
        (["164.502(a)"], ["160.103"], (False, False)),
        (["Part 164"], ["164.502(a)"], (False, False)),
        (["not an id"], ["not an id"], (True, True)),  # what is no id matches itself only
        ([], ["164.502(a)"], (False, False)),
    ],
)
def test_citation_hits(cited, gold, found) -> None:
    assert citation_hits(cited, gold) == found


def test_reports_name_the_figures() -> None:
    result = metrics(RECORDS, GOLD)
    table = markdown_table({"m": result})
    assert table.splitlines()[2].endswith("| 0.800 / 0.600 (5) |")
    details = markdown_details({"m": result})
    assert "1 cases without gold regulations, 1 citing no norm" in details
    assert "| all | 5 | 0.800 | 0.600 |" in details
    assert "| prohibit | 2 | 1.000 | 0.500 |" in details
    assert "| not applicable | 0 | – | – |" in details
    assert "5 regulations, 2 below 1.000" in details
    assert "| 164.502(a) | 1 | 0.000 |" in details
    assert "| 164.506(c) |" not in details  # right every time: only in the JSON
    # no gold regulation at all: no figure, said so
    bare = metrics([{k: v for k, v in r.items() if k != "gold_refs"} for r in RECORDS])
    assert bare["citations"]["n"] == 0 and bare["by_norm"] == {}
    assert bare["citations"]["not_scored"]["no_gold_refs"] == 7
    assert markdown_table({"m": bare}).splitlines()[2].endswith("| – |")
    assert markdown_details({"m": bare}) == ""


def test_gold_references_of_a_case_file(tmp_path: Path) -> None:
    cases = {c.case_id: c for c in read_cases(REGRESSION)}
    refs = gold_references([cases["cr-0001"], cases["cr-0002"]])
    assert refs == {"cr-0001": ["164.502(a)"], "cr-0002": ["164.502(a)", "164.506(c)(2)"]}
    # the synthetic files' two columns hold the same id once; a real case's list is read
    path = tmp_path / "cases.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["generate_background", "generate_HIPAA_type", "refer_id", "generate_regulation_ids"]
        )
        writer.writerow(["A story.", "Permit", "164.510(b)(4)", "['164.510(b)(4)']"])
        writer.writerow(["Another.", "Forbid", "", "['§ 164.508(a)(2)', '164.502(a)']"])
        writer.writerow(["A third.", "Not Applicable", "", ""])
    refs = gold_references(read_cases(path))
    assert refs == {"1": ["164.510(b)(4)"], "2": ["164.508(a)(2)", "164.502(a)"], "3": []}


def test_run_logs_the_gold_regulations(tmp_path: Path) -> None:
    cases = read_cases(REGRESSION)[:2]
    decide = lambda text: {"verdict": "prohibit", "norms": norms("164.502(a)")}  # noqa: E731
    run(cases, "m", decide, tmp_path)
    logged = read_log(tmp_path / "m.jsonl")
    assert logged["cr-0002"]["gold_refs"] == ["164.502(a)", "164.506(c)(2)"]
    # the figures come from the log alone
    result = metrics(list(logged.values()))
    assert result["citations"]["n"] == 2 and result["citations"]["paragraph_hits"] == 2


def test_pcheck_eval_reports_citations_and_accuracy_by_norm(tmp_path: Path, capsys) -> None:
    with REGRESSION.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))[:4]
    path = tmp_path / "cases.csv"

    def write(rows: list[dict[str, str]]) -> None:
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    write(rows)
    out = tmp_path / "out"
    argv = ["eval", "--cases", str(path), "--method", "checklist", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "checklist: cited norms against the gold regulations" in printed
    assert "accuracy by first gold regulation" in printed
    assert (out / "table.md").read_text(encoding="utf-8") in printed
    result = json.loads((out / "checklist.metrics.json").read_text(encoding="utf-8"))
    log = read_log(out / "checklist.jsonl")
    cited = result["citations"]
    assert cited["n"] + cited["not_scored"]["total"] == 4
    assert cited["not_scored"]["no_gold_refs"] == 0
    assert cited["n"] == sum(1 for r in log.values() if r["norms"])
    first = {row["refer_id"].split(";")[0].strip() for row in rows}
    assert set(result["by_norm"]) == first
    # a gold regulation changed in the file, the narrative and label not: the verdicts are
    # reused, the figures follow the file
    write([{**rows[0], "refer_id": "160.103"}, *rows[1:]])
    assert main([*argv, "--json"]) == 0
    rerun = json.loads(capsys.readouterr().out)
    assert "160.103" in rerun["by_norm"]
    assert read_log(out / "checklist.jsonl")[rows[0]["case_id"]]["gold_refs"] != ["160.103"]
