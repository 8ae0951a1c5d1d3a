"""Bad input to the command line is one line and a non-zero exit, never a traceback: a case
too long for the parser, text that is not UTF-8 on standard input, an endless file, labelled
drafts that lack what the measure reads, a port that does not exist."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_case_too_long_for_the_parser(tmp_path: Path, capsys) -> None:
    big = tmp_path / "big.txt"
    big.write_text("Dr. Lee emailed the chart to a reporter. " * 25_000, encoding="utf-8")
    assert main(["check", "--file", str(big)]) == 1
    assert "more than the 300,000 read" in one_line(capsys)


@pytest.mark.parametrize("command", [["check"], ["guard", "--to", "a reporter"]])
def test_text_that_is_not_utf8_on_standard_input(command, monkeypatch, capsys) -> None:
    raw = io.BytesIO(b"Dr. Lee told \xff\xfe a reporter")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw, encoding="utf-8"))
    assert main([*command, "--file", "-"]) == 1
    assert "-: not UTF-8 text (byte 13)" in one_line(capsys)


@pytest.mark.parametrize("command", [["check"], ["guard", "--to", "a reporter"]])
def test_an_endless_file_is_not_read_into_memory(command, capsys) -> None:
    assert main([*command, "--file", "/dev/zero"]) == 1
    assert "/dev/zero: larger than 16 MB" in one_line(capsys)


GOOD_SPAN = {"start": 3, "end": 10, "text": "Ann Lee", "kind": "identifier", "needed": True}


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({}, 'needs "spans"'),
        ({"spans": [{k: v for k, v in GOOD_SPAN.items() if k != "start"}]}, '"start" and "end"'),
        ({"spans": [{k: v for k, v in GOOD_SPAN.items() if k != "needed"}]}, '"needed"'),
        ({"spans": [{k: v for k, v in GOOD_SPAN.items() if k != "text"}]}, "not the draft"),
        ({"spans": [GOOD_SPAN | {"end": 99}]}, "not inside the draft"),
        ({"spans": [GOOD_SPAN | {"kind": "name"}]}, '"kind"'),
        ({"spans": [GOOD_SPAN], "verdict": None}, '"verdict"'),
    ],
)
def test_labelled_drafts_that_lack_a_field(record, said, tmp_path: Path, capsys) -> None:
    draft = {"text": "Hi Ann Lee", "to": "the health plan", "purpose_words": "a claim"}
    draft |= {"verdict": "permit"} | record
    path = tmp_path / "drafts.jsonl"
    path.write_text(json.dumps(draft) + "\n", encoding="utf-8")
    assert main(["guard-eval", "--file", str(path)]) == 1
    assert said in one_line(capsys)


@pytest.mark.parametrize("port", ["70000", "0", "http"])
def test_a_port_that_does_not_exist(port, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["app", "--port", port])
    assert stop.value.code == 2
    assert "is not a port number (1-65535)" in capsys.readouterr().err.splitlines()[-1]
