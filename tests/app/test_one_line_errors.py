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


def test_a_narrative_of_a_dash_is_read_from_standard_input(monkeypatch, capsys) -> None:
    text = (
        "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's complete medical records "
        "to a newspaper reporter without her authorization."
    )
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8"))
    assert main(["check", "-"]) == 0
    assert "Verdict: prohibit" in capsys.readouterr().out


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


def test_a_check_imports_only_what_it_uses() -> None:
    """spaCy reads every package that registers a pipeline component; a check loads only
    spaCy's own, so Presidio's analyzer (and transformers through it) stay out: seconds."""
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "seen = set()\n"
        "class Watch:\n"  # every import asked for, even one forgotten again afterwards
        "    def find_spec(self, name, path=None, target=None):\n"
        "        seen.add(name.split('.')[0])\n"
        "sys.meta_path.insert(0, Watch())\n"
        "from privacy_checklist.app.cli import main\n"
        "main(['check', 'A nurse told a reporter that a patient has HIV.'])\n"
        "names = ('presidio_analyzer', 'transformers', 'torch', 'sentence_transformers')\n"
        "print(json.dumps({n: n in seen and sys.modules.get(n) is not None for n in names}"
        " | {'asked:' + n: n in seen for n in names[:2]}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "presidio_analyzer": False,
        "transformers": False,
        "torch": False,
        "sentence_transformers": False,
        "asked:presidio_analyzer": False,
        "asked:transformers": False,
    }


def test_a_file_with_windows_line_ends_reads_as_text_mode_did(tmp_path: Path, capsys) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_bytes(b"Hi Ann,\r\nyour results are in.\rThanks\r\n")
    from privacy_checklist.app.cli.common import read_text_file

    assert read_text_file(str(draft)) == "Hi Ann,\nyour results are in.\nThanks\n"


def test_damaged_need_models_are_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from privacy_checklist.reasoning.guard import need

    bad = tmp_path / "guard_need.npz"
    bad.write_bytes(b"\x00not a model")
    need.shipped.cache_clear()
    monkeypatch.setattr(need, "shipped", lambda: need.load(bad))
    import privacy_checklist.reasoning.guard.message as message

    monkeypatch.setattr(message, "shipped_need", lambda: need.load(bad))
    draft = tmp_path / "d.txt"
    draft.write_text("Claim for Ana Ruiz, seen 3/4 for a sprain.", encoding="utf-8")
    assert main(["guard", "--file", str(draft), "--to", "Aetna claims"]) == 1
    said = one_line(capsys)
    assert "guard_need.npz" in said and "need_fit" in said
