"""Nothing lost, nothing silently wrong: ``pcheck eval`` / ``check`` / ``retrieval-eval``.

Resume reuses a logged verdict only when everything that decided it is unchanged; case files
with odd labels or unusable rows are read and reported by line; a failed LLM request is its own
outcome (never a parse failure, never exit 0); and the small guards (one run per folder, --limit,
missing files, interruptions, unwritable folders, torn log lines).

Real data: the synthetic val cases of ../shared/data/cases and the shipped knowledge base; the
LLM is the scripted OpenAI-compatible server of ``tests/scripted_llm.py`` (and, for bodies it
cannot send, a raw HTTP server below).
"""

from __future__ import annotations

import csv
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.ingest.cases import case_label, read_case_file
from privacy_checklist.reasoning.evaluation.harness import RunStats, metrics, read_log, run
from tests.scripted_llm import ScriptedLLM, serve

VAL = "val_generate_cases_hipaa_applicability.csv"
COLUMNS = ("generate_HIPAA_type", "generate_background")
ANSWER = json.dumps({"reasoning": "a disclosure to the police", "answer": "prohibited"})


# --------------------------------------------------------------------------- helpers


def val_rows(shared: Path) -> list[dict[str, str]]:
    with (shared / "cases" / VAL).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def by_label(shared: Path, label: str, n: int) -> list[dict[str, str]]:
    return [r for r in val_rows(shared) if r["generate_HIPAA_type"] == label][:n]


def write_cases(path: Path, rows: list[dict[str, str]], columns=COLUMNS) -> Path:
    """A case CSV of ``rows`` (only ``columns``); row i starts on line i + 1."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def relabel(rows: list[dict[str, str]], *labels: str) -> list[dict[str, str]]:
    return [{**row, "generate_HIPAA_type": label} for row, label in zip(rows, labels, strict=True)]


def read_metrics(out: Path, method: str) -> dict:
    return json.loads((out / f"{method}.metrics.json").read_text(encoding="utf-8"))


def log_lines(out: Path, method: str) -> list[str]:
    return (out / f"{method}.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.fixture
def env(tmp_path: Path, monkeypatch) -> Path:
    """A private LLM cache and norm store; no LLM configured by the environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PCHECK_STORE", str(tmp_path / "norms.sqlite"))
    for name in ("PCHECK_LLM_BASE_URL", "PCHECK_LLM_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("index")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(lambda body, n: ANSWER) as server:
        yield server


def llm_args(url: str, model: str = "scripted-1", *more: str) -> list[str]:
    return ["--llm-base-url", url, "--llm-model", model, *more]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RawServer:
    """Answers every POST with a fixed status, content type and body (what the scripted server
    cannot send: an HTML page, a body that is not JSON, JSON that is not a completion)."""

    def __init__(self, status: int, content_type: str, body: bytes) -> None:
        outer = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------- 1. resume


def test_resume_redecides_when_the_cases_change(shared, env, index_dir, capsys) -> None:
    """Same case ids, new narratives and labels: decided again, scored on the new labels."""
    permits = by_label(shared, "Permit", 4)
    forbids = by_label(shared, "Forbid", 4)
    v1 = write_cases(env / "v1.csv", permits)
    out, fresh = env / "run", env / "fresh"
    common = ["--method", "offline-fast", "--index", str(index_dir), "--json"]
    assert main(["eval", "--cases", str(v1), "--out", str(out), *common]) == 0
    capsys.readouterr()
    v2 = write_cases(env / "v1.csv", forbids)  # the same file, edited
    assert main(["eval", "--cases", str(v2), "--out", str(out), *common]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main(["eval", "--cases", str(v2), "--out", str(fresh), *common]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert resumed["confusion"] == expected["confusion"]
    assert resumed["per_class"]["prohibit"]["support"] == 4 == resumed["n"]
    current = read_log(out / "offline-fast.jsonl")
    assert {r["gold"] for r in current.values()} == {"prohibit"}
    # the old lines are superseded, not counted: 8 lines in the log, 4 cases in the metrics
    assert len(log_lines(out, "offline-fast")) == 8 and read_metrics(out, "offline-fast")["n"] == 4
    # same narratives, only the labels changed: the gold is the new one
    v3 = write_cases(env / "v1.csv", relabel(forbids, "Permit", "Permit", "Forbid", "Forbid"))
    assert main(["eval", "--cases", str(v3), "--out", str(out), *common]) == 0
    relabelled = json.loads(capsys.readouterr().out)
    assert relabelled["per_class"]["permit"]["support"] == 2
    assert relabelled["per_class"]["prohibit"]["support"] == 2


def test_a_folder_keeps_one_case_file_per_method(shared, env, index_dir, capsys) -> None:
    """Another case file into a folder that holds a run: refused in one line, the log left as
    it was; the metrics name their case file; the browser shows only that file's cases."""
    from privacy_checklist.app.ui.pages.evaluation import load_run, records_of

    first = write_cases(env / "first.csv", by_label(shared, "Permit", 3))
    other = write_cases(env / "other.csv", by_label(shared, "Forbid", 2))
    out = env / "run"
    common = ["--method", "offline-fast", "--index", str(index_dir), "--json"]
    assert main(["eval", "--cases", str(first), "--out", str(out), *common]) == 0
    capsys.readouterr()
    before = log_lines(out, "offline-fast")
    assert main(["eval", "--cases", str(other), "--out", str(out), *common]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds offline-fast's run on" in err
    assert log_lines(out, "offline-fast") == before
    recorded = read_metrics(out, "offline-fast")["cases"]
    assert recorded["file"] == str(first.resolve()) and len(recorded["ids"]) == 3
    # the same file with fewer cases: the metrics and the browser count only those
    write_cases(first, by_label(shared, "Permit", 1))
    assert main(["eval", "--cases", str(first), "--out", str(out), *common]) == 0
    capsys.readouterr()
    method = load_run(out)["offline-fast"]
    assert method.metrics is not None and method.metrics["n"] == 1
    assert len(records_of(method)) == 1 and len(read_log(out / "offline-fast.jsonl")) == 3


@pytest.mark.parametrize("method", ["offline-fast", "checklist"])
def test_a_store_edit_decides_again(method, shared, env, index_dir, capsys) -> None:
    """offline-fast and the checklist read the norms through the store's effective view: an
    editor's change there is an input of every logged verdict."""
    from privacy_checklist.kg.kb import load
    from privacy_checklist.kg.store import NormStore

    cases = write_cases(env / "cases.csv", by_label(shared, "Forbid", 2))
    out = env / "run"
    argv = ["eval", "--cases", str(cases), "--out", str(out), "--method", method]
    argv += ["--index", str(index_dir)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert "decided again" not in capsys.readouterr().err  # nothing changed: reused
    baseline = load().norms
    node = "164.502(a)(1)(ii)"
    with NormStore(env / "norms.sqlite") as store:
        store.edit(node, {"purpose": "an editor's reading"}, "ann", 0, baseline)
    assert main(argv) == 0
    assert f"{method}: 2 logged case(s) decided again" in capsys.readouterr().err


def test_every_data_file_is_an_input_of_every_offline_method(
    shipped, tmp_path: Path, monkeypatch
) -> None:
    """Each data file the readers and models read (reasoning/data, ontologies), changed in a
    copy, changes the settings every logged verdict is reused by."""
    import shutil

    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.evaluation import digests as methods
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner
    from privacy_checklist.retrieval.index import RetrievalIndex

    copies = []
    for folder in methods.data_folders():
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(copy)
    monkeypatch.setattr(methods, "data_folders", lambda: copies)
    reasoners = [
        ChecklistReasoner(shipped),
        OfflineReasoner(shipped, RetrievalIndex(shipped, embeddings=False), fast=True),
    ]
    files = [p for copy in copies for p in sorted(copy.iterdir()) if p.is_file()]
    assert {"flow_cues.json", "fact_cues.json", "condition_kinds.json"} <= {p.name for p in files}
    for reasoner in reasoners:
        before = methods.decision_settings(reasoner)
        for path in files:
            original = path.read_bytes()
            path.write_bytes(original + b"\n")
            assert methods.decision_settings(reasoner) != before, (reasoner.name, path.name)
            path.write_bytes(original)


def test_resume_redecides_when_the_model_or_method_settings_change(
    llm, shared, env, index_dir, capsys
) -> None:
    cases = write_cases(env / "cases.csv", by_label(shared, "Forbid", 3))
    out = env / "run"
    with serve(llm, lambda body, n: ANSWER) as server:
        base = ["eval", "--cases", str(cases), "--method", "dp", "--out", str(out)]
        base += ["--index", str(index_dir)]
        assert main([*base, *llm_args(server.base_url, "model-a")]) == 0
        assert [r["model"] for r in server.requests] == ["model-a"] * 3
        assert main([*base, *llm_args(server.base_url, "model-a")]) == 0  # unchanged: reused
        assert len(server.requests) == 3
        assert main([*base, *llm_args(server.base_url, "model-b")]) == 0
        assert [r["model"] for r in server.requests[3:]] == ["model-b"] * 3
        capsys.readouterr()
    records = read_log(out / "dp.jsonl")
    assert {r["llm"] for r in records.values()} == {"llm:model-b"}
    assert read_metrics(out, "dp")["n"] == 3
    # a method parameter (k of a retrieval method) decides too
    with serve(llm, lambda body, n: ANSWER) as server:
        base = ["eval", "--cases", str(cases), "--method", "bm25-content", "--out", str(out)]
        base += ["--index", str(index_dir), *llm_args(server.base_url)]
        assert main([*base, "--k", "1"]) == 0
        asked = len(server.requests)
        assert main([*base, "--k", "1"]) == 0
        assert len(server.requests) == asked
        assert main([*base, "--k", "2"]) == 0
        assert len(server.requests) > asked
    capsys.readouterr()
    assert {r["retrieved"].__len__() for r in read_log(out / "bm25-content.jsonl").values()} == {2}


@dataclass
class Case:
    case_id: str
    text: str
    label: str


def test_run_reuses_only_under_the_same_settings(tmp_path) -> None:
    """The mechanism: the settings a record was decided under are part of what it is keyed by
    (the knowledge base and model digests, the prompts ...)."""
    cases = [Case("1", "A nurse faxed the chart to the insurer.", "Permit")]
    asked: list[str] = []

    def decide(text: str) -> dict:
        asked.append(text)
        return {"verdict": "permit"}

    run(cases, "m", decide, tmp_path, settings={"kb": "digest-1"})
    run(cases, "m", decide, tmp_path, settings={"kb": "digest-1"})
    assert len(asked) == 1
    run(cases, "m", decide, tmp_path, settings={"kb": "digest-2"})
    assert len(asked) == 2


def test_settings_name_the_knowledge_base_and_model_digests(env, index_dir, tmp_path) -> None:
    import shutil

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.evaluation.digests import decision_settings
    from privacy_checklist.reasoning.methods import build_method
    from privacy_checklist.retrieval.index import RetrievalIndex

    copy = tmp_path / "kb"
    shutil.copytree(kbmod.builtin_path(), copy)
    kb = kbmod.load(copy)
    index = RetrievalIndex(kb, index_dir, embeddings=False)
    fast = decision_settings(build_method("offline-fast", kb, index, None))
    slow = decision_settings(build_method("offline", kb, index, None))
    assert fast["method"] == "offline-fast" and fast["model"] != slow["model"]
    provenance = copy / "provenance.json"
    provenance.write_text(provenance.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert decision_settings(build_method("offline-fast", kb, index, None))["kb"] != fast["kb"]


# --------------------------------------------------------------------------- 2. case files


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("Permit", "permit"),
        ("permit", "permit"),
        ("PERMITTED", "permit"),
        ("Forbid", "prohibit"),
        ("FORBID", "prohibit"),
        ("Prohibit", "prohibit"),
        ("prohibited", "prohibit"),
        ("Not Applicable", "not_applicable"),
        ("not applicable", "not_applicable"),
        ("not_applicable", "not_applicable"),
        (" Not  applicable ", "not_applicable"),
        ("Maybe", None),
        ("", None),
    ],
)
def test_case_label(written, label) -> None:
    assert case_label(written) == label


def test_eval_accepts_label_synonyms(shared, env, index_dir, capsys) -> None:
    rows = relabel(
        by_label(shared, "Permit", 1)
        + by_label(shared, "Forbid", 3)
        + by_label(shared, "Not Applicable", 1),
        "permit",
        "Prohibit",
        "prohibited",
        "FORBID",
        "not applicable",
    )
    cases = write_cases(env / "cases.csv", rows)
    argv = ["eval", "--cases", str(cases), "--method", "offline-fast", "--out", str(env / "o")]
    assert main([*argv, "--index", str(index_dir), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 5
    supports = {k: v["support"] for k, v in result["per_class"].items()}
    assert supports == {"permit": 1, "prohibit": 3, "not_applicable": 1}


def test_eval_reports_unusable_rows_by_line(shared, env, index_dir, capsys) -> None:
    rows = by_label(shared, "Permit", 4)
    rows[1] = {**rows[1], "generate_HIPAA_type": "Maybe"}  # line 3
    rows[2] = {**rows[2], "generate_background": "   "}  # line 4
    cases = write_cases(env / "cases.csv", rows)
    out = env / "o"
    argv = ["eval", "--cases", str(cases), "--method", "offline-fast", "--out", str(out)]
    assert main([*argv, "--index", str(index_dir)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "line 3" in err and "'Maybe'" in err
    assert "line 4" in err and "empty narrative" in err
    assert read_metrics(out, "offline-fast")["n"] == 2
    found = read_case_file(cases)
    assert [c.line for c in found.cases] == [2, 5]
    assert [(s.line, "Maybe" in s.reason) for s in found.skipped] == [(3, True), (4, False)]


@pytest.mark.parametrize("later_quote", [True, False])
def test_an_unbalanced_quote_is_refused_by_its_line(
    later_quote, shared, env, index_dir, capsys
) -> None:
    """One stray quote mark would take the next rows into one narrative (n=99 of 100)."""
    story = "Dr. Lee emailed the patient's chart to her employer without her consent"
    rows = [
        {
            "case_id": f"c{n}",
            "generate_background": f"{story} ({n}).",
            "generate_HIPAA_type": "Forbid",
        }
        for n in range(1, 7)
    ]
    cases = write_cases(env / "cases.csv", rows, columns=("case_id", *COLUMNS))
    lines = cases.read_text(encoding="utf-8").splitlines(keepends=True)
    start = 4  # c3 is on line 4 (the header is line 1)
    assert lines[start - 1].startswith("c3,Forbid,Dr. Lee")
    lines[start - 1] = lines[start - 1].replace(",Dr.", ',"Dr.')  # a quote opened, never closed
    if later_quote:
        lines[-1] = lines[-1].replace(",Dr.", ',"Dr.')  # a later stray quote closes it
    cases.write_text("".join(lines), encoding="utf-8")
    argv = ["eval", "--cases", str(cases), "--method", "offline-fast", "--out", str(env / "o")]
    assert main([*argv, "--index", str(index_dir)]) == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert f"{cases}:{start}:" in err and "unbalanced quote" in err
    assert not (env / "o" / "offline-fast.jsonl").exists()


def test_eval_with_nothing_to_score_fails(shared, env, index_dir, capsys) -> None:
    rows = by_label(shared, "Permit", 2)
    no_label = write_cases(env / "nolabel.csv", rows, columns=("generate_background",))
    header_only = write_cases(env / "header.csv", [])
    all_bad = write_cases(env / "bad.csv", relabel(rows, "Maybe", "Perhaps"))
    for path, said in (
        (no_label, "no generate_HIPAA_type column"),
        (header_only, "no case"),
        (all_bad, "no case"),
    ):
        argv = ["eval", "--cases", str(path), "--method", "offline-fast", "--out", str(env / "o")]
        assert main([*argv, "--index", str(index_dir)]) == 1, path
        err = capsys.readouterr().err
        assert said in err and str(path) in err and "Traceback" not in err
        assert err.strip().splitlines()[-1].startswith("pcheck eval:")


# --------------------------------------------------------------------------- 3. request failures


CASE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a police "
    "detective without her consent."
)


@pytest.mark.parametrize(
    ("script", "extra", "cause"),
    [
        (lambda b, n: ("status", 500), ["--llm-retries", "0"], "HTTP 500"),
        (lambda b, n: ("status", 429), ["--llm-retries", "0"], "HTTP 429"),
        (lambda b, n: ("status", 401), [], "HTTP 401"),
        (
            lambda b, n: ("sleep", 1.0, ANSWER),
            ["--llm-timeout", "0.2", "--llm-retries", "0"],
            "imed out",
        ),
    ],
    ids=["500", "429", "401", "timeout"],
)
def test_check_request_failure_is_not_a_parse_failure(
    llm, env, index_dir, capsys, script, extra, cause
) -> None:
    with serve(llm, script) as server:
        argv = ["check", CASE, "--method", "dp", "--index", str(index_dir)]
        code = main([*argv, *llm_args(server.base_url), *extra])
    out, err = capsys.readouterr()
    assert code == 1
    assert "parse failure" not in (out + err).lower()
    assert "LLM request failed" in err and cause in err and server.base_url in err
    assert len(err.strip().splitlines()) == 1
    # --json keeps the record, marked as a request failure
    with serve(llm, script) as server:
        argv = ["check", CASE, "--method", "dp", "--index", str(index_dir), "--json"]
        code = main([*argv, *llm_args(server.base_url), *extra])
    out, err = capsys.readouterr()
    assert code == 1 and json.loads(out)["verdict"] == "request_failure"


@pytest.mark.parametrize(
    ("content_type", "body", "said"),
    [
        (
            "text/html",
            b"<html><body><h1>Welcome to nginx!</h1></body></html>",
            "not a chat completion",
        ),
        ("application/json", b"{not json", "not a chat completion"),
        ("application/json", b'{"object": "list", "data": []}', "not a chat completion"),
    ],
    ids=["html", "broken-json", "other-json"],
)
def test_check_malformed_body(env, index_dir, capsys, content_type, body, said) -> None:
    with RawServer(200, content_type, body) as server:
        argv = ["check", CASE, "--method", "dp", "--index", str(index_dir)]
        code = main([*argv, *llm_args(server.base_url)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "AttributeError" not in err
    assert len(err.strip().splitlines()) == 1
    assert "LLM request failed" in err and said in err and server.base_url in err


def test_dead_port_fails_fast_naming_the_url(env, index_dir, capsys) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    code = main(["check", CASE, "--method", "dp", "--index", str(index_dir), *llm_args(url)])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1 and url in err and "LLM request failed" in err
    assert "refused" in err
    assert elapsed < 5  # no backoff (1 + 2 + 4 + 8 s before) against a port nobody listens on


def test_eval_with_failed_requests_is_not_a_success(llm, shared, env, index_dir, capsys) -> None:
    cases = write_cases(env / "cases.csv", by_label(shared, "Forbid", 3))
    out = env / "run"
    argv = ["eval", "--cases", str(cases), "--method", "dp", "--out", str(out)]
    argv += ["--index", str(index_dir), "--llm-retries", "0"]
    with serve(llm, lambda b, n: ("status", 500)) as server:
        code = main([*argv, *llm_args(server.base_url)])
    captured = capsys.readouterr()
    assert code == 1
    assert "3 of 3" in captured.err and "LLM request failed" in captured.err
    result = read_metrics(out, "dp")
    assert result["request_failures"] == 3 and result["parse_failures"] == 0 and result["n"] == 0
    assert {r["verdict"] for r in read_log(out / "dp.jsonl").values()} == {"request_failure"}
    assert "request failures" in (out / "table.md").read_text(encoding="utf-8")
    # the endpoint is back: the undecided cases are asked again, the run succeeds
    with serve(llm, lambda b, n: ANSWER) as server:
        assert main([*argv, *llm_args(server.base_url)]) == 0
        assert len(server.requests) == 3
    capsys.readouterr()
    result = read_metrics(out, "dp")
    assert result["request_failures"] == 0 and result["n"] == 3 and result["accuracy"] == 1.0


def test_metrics_keep_request_failures_apart() -> None:
    records = [
        {"case_id": "1", "gold": "permit", "verdict": "permit"},
        {"case_id": "2", "gold": "permit", "verdict": "parse_failure"},
        {"case_id": "3", "gold": "prohibit", "verdict": "request_failure", "retry": True},
    ]
    result = metrics(records)
    assert result["n"] == 2 and result["parse_failures"] == 1 and result["request_failures"] == 1
    assert result["accuracy"] == 0.5 and result["undecided"] == ["3"]


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--llm-base-url", "localhost:8000/v1", "--llm-base-url"),
        ("--llm-base-url", "ftp://example.org/v1", "--llm-base-url"),
        ("--llm-base-url", "http://", "--llm-base-url"),
        ("--llm-timeout", "0", "--llm-timeout"),
        ("--llm-timeout", "-3", "--llm-timeout"),
        ("--llm-timeout", "nan", "--llm-timeout"),
    ],
)
def test_llm_options_are_validated_up_front(env, capsys, option, value, said) -> None:
    argv = ["check", CASE, "--method", "dp", "--llm-model", "m"]
    if option != "--llm-base-url":
        argv += ["--llm-base-url", "http://127.0.0.1:9/v1"]
    started = time.monotonic()
    code = main([*argv, option, value])
    err = capsys.readouterr().err
    assert code == 1 and said in err and value in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert time.monotonic() - started < 5  # refused before any request


# --------------------------------------------------------------------------- 4. smaller guards


def test_second_eval_into_the_same_folder_is_refused(llm, shared, env, index_dir, capsys) -> None:
    cases = write_cases(env / "cases.csv", by_label(shared, "Forbid", 4))
    out = env / "run"
    argv = ["eval", "--cases", str(cases), "--method", "dp", "--out", str(out)]
    argv += ["--index", str(index_dir), "--parallel", "1"]
    with serve(llm, lambda b, n: ("sleep", 0.4, ANSWER)) as server:
        argv += llm_args(server.base_url)
        codes: list[int] = []
        first = threading.Thread(target=lambda: codes.append(main(argv)))
        first.start()
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        second = main(argv)
        first.join(60)
    err = capsys.readouterr().err
    assert codes == [0] and second == 1
    assert str(out) in err and "another pcheck eval" in err
    assert len(server.requests) == 4  # each case asked once, by the first run
    assert len(log_lines(out, "dp")) == 4


@pytest.mark.parametrize("command", ["eval", "retrieval-eval"])
@pytest.mark.parametrize("limit", ["0", "-1", "two"])
def test_limit_must_be_a_positive_integer(shared, env, capsys, command, limit) -> None:
    argv = [command, "--cases", str(shared / "cases" / VAL), "--limit", limit]
    if command == "eval":
        argv += ["--out", str(env / "o")]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and "--limit" in capsys.readouterr().err
    assert not (env / "o").exists()


def test_check_missing_file_says_no_such_file(env, capsys) -> None:
    missing = env / "nowhere.txt"
    assert main(["check", "--file", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "no such file" in err and str(missing) in err and "UTF-8" not in err


def test_eval_cases_folder_says_it_is_a_folder(shared, env, capsys) -> None:
    folder = shared / "cases"
    assert main(["eval", "--cases", str(folder), "--out", str(env / "o")]) == 1
    err = capsys.readouterr().err
    assert "is a folder" in err and "no such case file" not in err


def test_eval_interrupted_says_what_was_kept(shared, env, index_dir, capsys, monkeypatch) -> None:
    from privacy_checklist.reasoning.learned.offline import OfflineReasoner

    cases = write_cases(env / "cases.csv", by_label(shared, "Permit", 6))
    out = env / "run"
    argv = ["eval", "--cases", str(cases), "--method", "offline-fast", "--out", str(out)]
    argv += ["--index", str(index_dir)]
    real = OfflineReasoner.check
    calls = []

    def stopping(self, text):
        calls.append(text)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(self, text)

    monkeypatch.setattr(OfflineReasoner, "check", stopping)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "nothing was changed" not in err
    assert "3 cases" in err and "rerun" in err and str(out) in err
    assert len(log_lines(out, "offline-fast")) == 3
    monkeypatch.setattr(OfflineReasoner, "check", real)
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 6
    assert len(log_lines(out, "offline-fast")) == 6  # the three kept were not decided again


def test_parallel_run_stopped_keeps_what_finished(tmp_path) -> None:
    """A stop during a parallel run starts no other case and keeps every finished one."""
    cases = [Case(str(i), f"A clinic mailed chart {i} to an insurer.", "Permit") for i in range(40)]
    started: list[str] = []

    def decide(text: str) -> dict:
        started.append(text)
        if len(started) == 3:
            raise KeyboardInterrupt
        time.sleep(0.05)
        return {"verdict": "permit"}

    stats = RunStats()
    with pytest.raises(KeyboardInterrupt):
        run(cases, "m", decide, tmp_path, workers=2, stats=stats)
    lines = (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(started) < 10 and len(lines) == stats.decided == len(started) - 1
    assert all(json.loads(line)["verdict"] == "permit" for line in lines)


def test_eval_out_unwritable_is_one_line(shared, env, capsys) -> None:
    blocker = env / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    out = blocker / "run"
    argv = ["eval", "--cases", str(shared / "cases" / VAL), "--limit", "2"]
    assert main([*argv, "--method", "offline-fast", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(out) in err and "Traceback" not in err


def test_torn_log_line_is_dropped_on_resume(shared, env, index_dir, capsys) -> None:
    cases = write_cases(env / "cases.csv", by_label(shared, "Permit", 3))
    out = env / "run"
    argv = ["eval", "--cases", str(cases), "--method", "offline-fast", "--out", str(out)]
    argv += ["--index", str(index_dir)]
    assert main(argv) == 0
    log = out / "offline-fast.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "torn" in err
    kept = log.read_text(encoding="utf-8").splitlines()
    assert len(kept) == 3 and all(json.loads(line)["case_id"] for line in kept)


def test_evaluation_page_shows_request_failures(
    llm, shared, env, index_dir, capsys, monkeypatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from privacy_checklist.app.ui.pages import evaluation

    cases = write_cases(env / "cases.csv", by_label(shared, "Forbid", 3))
    out = env / "runs" / "dp-down"
    argv = ["eval", "--cases", str(cases), "--method", "dp", "--out", str(out)]
    argv += ["--index", str(index_dir), "--llm-retries", "0"]
    with serve(llm, lambda b, n: ("status", 500)) as server:
        assert main([*argv, *llm_args(server.base_url)]) == 1
    capsys.readouterr()

    def page() -> None:
        from privacy_checklist.app.ui.pages import evaluation

        evaluation.render()

    monkeypatch.setenv("PCHECK_RUNS", str(env / "runs"))  # pcheck app --runs
    at = AppTest.from_function(page, default_timeout=60)
    at.run()
    at.text_input(key=evaluation.FOLDER).set_value("dp-down").run()
    assert not at.exception
    shown = {m.label: m.value for m in at.metric}
    assert shown["Request failures"] == "3" and shown["Parse failures"] == "0"
    assert any("LLM request failed" in w.value for w in at.warning)
    at.selectbox(key=evaluation.PREDICTED).select("request_failure").run()
    assert any(c.value == "3 of 3 cases" for c in at.caption)
    at.checkbox(key=evaluation.MISTAKES).check().run()  # no say, no mistake
    assert any("No case matches" in i.value for i in at.info)


def test_every_method_says_what_decides_it(llm, shared, env, index_dir, tmp_path) -> None:
    """Reasoner.settings() on every method of the registry, no isinstance ladder: the
    knowledge base's digest in each, the model and endpoint in the LLM ones, k where retrieved."""
    from privacy_checklist.kg.kb import load
    from privacy_checklist.reasoning.evaluation.digests import decision_settings
    from privacy_checklist.reasoning.methods import METHODS, RETRIEVAL_METHODS, build_method
    from privacy_checklist.retrieval.index import RetrievalIndex
    from tests.scripted_llm import client_for

    kb = load()
    index = RetrievalIndex(kb, index_dir, embeddings=False)
    client = client_for(llm, tmp_path)
    for name in METHODS:
        if name == "offline":
            continue  # the embedding model: offline-fast reads the same settings
        method = build_method(name, kb, index, client, k=3)
        settings = decision_settings(method)
        json.dumps(settings)  # logged with every verdict
        assert settings["method"] == name and settings["kb"] and settings["data"], name
        if name not in ("checklist", "offline-fast"):
            assert settings["llm"] == "llm:scripted-1" and settings["endpoint"] == llm.base_url
        assert (settings.get("k") == 3) == (name in RETRIEVAL_METHODS), name
