"""The pcheck command line, run in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from rdflib import Graph

from privacy_checklist.app.cli import build_parser, main

SUBCOMMANDS = [
    "app",
    "users",
    "ingest",
    "stats",
    "show",
    "define",
    "export",
    "roles",
    "attributes",
    "annotate",
    "annotate-eval",
    "answers",
    "guard",
    "guard-eval",
    "norms",
    "search",
    "retrieval-eval",
    "retrieval-tune",
    "check",
    "eval",
    "reasoner",
    "demo",
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_help(command: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"] if command else ["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: pcheck" in out
    if command is None:
        assert all(sub in out for sub in SUBCOMMANDS) and "--kb" in out


def test_every_subcommand_is_documented() -> None:
    parser = build_parser()
    actions = [a for a in parser._actions if a.dest == "command"]
    assert sorted(actions[0].choices) == sorted(SUBCOMMANDS)


def test_stats_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "--json")
    stats = json.loads(out)
    assert code == 0
    assert stats["nodes"] == 2274
    assert stats["internal_nodes"] == 642
    assert stats["references"]["internal"] >= 761
    assert stats["definitions"]["by_section"]["160.103"] >= 54


def test_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "164.502(a)(1)(i)")
    assert code == 0
    assert "Path: HIPAA" in out and "(a) Standard." in out
    assert "To the individual;" in out
    assert "← 164.502(b)(2)(ii)" in out  # cited by
    assert "Individual — 160.103(Individual)" in out
    code, out, _ = run(capsys, "show", "164.502(a)(1)(ii)", "--json")
    report = json.loads(out)
    assert [r["target"] for r in report["refs_out"]] == ["164.506"]
    assert report["path"][-2]["id"] == "164.502(a)(1)"


def test_show_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "164.502(a)(1)(ix)")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "did you mean 164.502(a)(1)(i)" in err


def test_define(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "define", "psychotherapy notes", "--at", "164.508(a)(2)", "--json")
    assert code == 0 and json.loads(out)["scope"] == "Part 164 Subpart E"


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "internal references" in out and "164.502(a)(1)(i)" in out
    assert "Full specification" in out and "Protected health information" in out


@pytest.mark.parametrize("fmt", ["json", "graphml", "ttl"])
def test_export(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / f"tree.{fmt}"
    code, out, _ = run(capsys, "export", "--what", "tree", "--format", fmt, "--out", str(out_file))
    assert code == 0 and "Wrote" in out
    if fmt == "json":
        assert len(json.loads(out_file.read_text())["nodes"]) == 2274
    elif fmt == "graphml":
        assert nx.read_graphml(out_file).number_of_nodes() == 2274
    else:
        assert len(Graph().parse(out_file)) > 15_000


def test_ingest_then_use_it(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "kb"
    code, out, _ = run(capsys, "ingest", "--source", str(shared / "hipaa"), "--out", str(out_dir))
    assert code == 0 and "2274 nodes" in out
    code, out, _ = run(capsys, "--kb", str(out_dir), "stats", "--json")
    stats = json.loads(out)
    assert stats["nodes"] == 2274 and stats["roles"]["nodes"] > 1000
    code, out, _ = run(
        capsys, "--kb", str(out_dir), "roles", "resolve", "--no-embeddings", "surgeon"
    )
    assert code == 0 and "health care provider" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"<html><body>not a regulation</body></html>", "not an eCFR part page"),
        ("§".encode("utf-16"), "not UTF-8"),
    ],
)
def test_ingest_bad_input_keeps_previous_kb(
    content: bytes, message: str, shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "kb"
    assert (
        run(
            capsys,
            "ingest",
            "--source",
            str(shared / "hipaa"),
            "--out",
            str(out_dir),
            "--no-graphs",
        )[0]
        == 0
    )
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    bad = tmp_path / "bad.html"
    bad.write_bytes(content)
    code, _, err = run(capsys, "ingest", "--source", str(bad), "--out", str(out_dir), "--no-graphs")
    assert code == 1
    assert message in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before


def test_ingest_same_part_twice(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = str(shared / "hipaa" / "ecfr-title45-part164.html")
    code, _, err = run(
        capsys, "ingest", "--source", page, page, "--out", str(tmp_path / "kb"), "--no-graphs"
    )
    assert code == 1 and "pass each part once" in err


def test_bad_kb_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--kb", str(tmp_path), "stats")
    assert code == 1 and "tree.json is missing" in err


def test_console_script_subprocess(tmp_path: Path) -> None:
    """The installed entry point, in a fresh process, from an unrelated directory."""
    pcheck = Path(sys.executable).parent / "pcheck"
    env = {k: v for k, v in os.environ.items() if k != "PCHECK_KB"}
    result = subprocess.run(
        [str(pcheck), "show", "164.502(a)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Standard." in result.stdout
    missing = subprocess.run(
        [str(pcheck), "frobnicate"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2 and "invalid choice" in missing.stderr
