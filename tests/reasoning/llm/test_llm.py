"""The LLM layer and the LLM annotator, against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.kg.store import NormStore
from privacy_checklist.reasoning.llm.annotate import LLMAnnotator, norm_from_answer
from privacy_checklist.reasoning.llm.client import (
    LLMClient,
    LLMConfig,
    LLMConfigError,
    parse_json_answer,
)
from tests.scripted_llm import ScriptedLLM, client_for

GOOD = json.dumps(
    {
        "norm_type": "permit",
        "sender": ["covered entity"],
        "recipient": ["individual"],
        "subject": ["individual"],
        "information_type": "protected health information",
        "purpose": "none",
        "consent_form": "none",
        "sender_is_subject": "no",
        "recipient_is_subject": "yes",
        "references": {},
    }
)


def node_of(body: dict) -> str:
    text = " ".join(m["content"] for m in body["messages"])
    found = re.search(r"Paragraph id: (\S+)", text)
    return found.group(1) if found else ""


def test_valid_answer_and_cache(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: GOOD) as server:
        client = client_for(server, tmp_path)
        first = client.complete([{"role": "user", "content": "hello"}])
        second = client.complete([{"role": "user", "content": "hello"}])
        assert first.text == GOOD and not first.cached
        assert second.text == GOOD and second.cached
        assert len(server.requests) == 1  # the rerun cost nothing
        assert server.requests[0]["temperature"] == 0


def test_rate_limit_then_success(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: ("status", 429) if n == 1 else GOOD) as server:
        outcome = client_for(server, tmp_path).complete([{"role": "user", "content": "x"}])
        assert outcome.text == GOOD and outcome.attempts == 2


def test_server_error_gives_up(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: ("status", 500)) as server:
        outcome = client_for(server, tmp_path, max_retries=2).complete(
            [{"role": "user", "content": "x"}]
        )
        assert outcome.text is None and "gave up after 3 attempts" in outcome.error
        assert len(server.requests) == 3


def test_client_error_is_not_retried(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: ("status", 401)) as server:
        outcome = client_for(server, tmp_path).complete([{"role": "user", "content": "x"}])
        assert outcome.text is None and "401" in outcome.error and len(server.requests) == 1


def test_slow_answer_times_out(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: ("sleep", 3.0, GOOD)) as server:
        client = client_for(server, tmp_path, timeout=0.5, max_retries=1)
        outcome = client.complete([{"role": "user", "content": "x"}])
        assert outcome.text is None and "Timeout" in outcome.error


def test_empty_answer(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, n: ("empty",)) as server:
        outcome = client_for(server, tmp_path).complete([{"role": "user", "content": "x"}])
        assert outcome.text is None and outcome.error == "empty answer"


def test_network_down(tmp_path: Path) -> None:
    config = LLMConfig(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        cache=None,
        max_retries=1,
        backoff=0.0,
        timeout=2,
    )
    outcome = LLMClient(config, sleep=lambda _s: None).complete([{"role": "user", "content": "x"}])
    assert outcome.text is None and "Connection" in outcome.error


def test_a_huge_answer_is_not_read(tmp_path: Path) -> None:
    """A body over the cap is an error in one line, said by its length or found while read."""
    huge = "loop " * 400_000  # 2 MB
    with ScriptedLLM(lambda body, n: huge) as server:
        outcome = client_for(server, tmp_path).complete([{"role": "user", "content": "x"}])
    assert outcome.text is None and "larger than 1,048,576 bytes" in outcome.error
    assert outcome.attempts == 1  # not retried

    class Unsized(http.server.BaseHTTPRequestHandler):  # HTTP/1.0: the body ends at close
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b'{"choices": [{"message": {"content": "')
                for _ in range(50):
                    self.wfile.write(b"x" * 65536)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Unsized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = LLMConfig(
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
            model="m",
            cache=None,
            max_retries=0,
            max_answer_bytes=100_000,
        )
        outcome = LLMClient(config).complete([{"role": "user", "content": "x"}])
    finally:
        server.shutdown()
        server.server_close()
    assert outcome.text is None and "larger than 100,000 bytes (more than" in outcome.error


def test_a_long_answer_is_printed_clipped(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    long = "The flow is prohibited. " + "Again and again. " * 2000
    with ScriptedLLM(lambda body, n: long) as server:
        argv = ["check", "--method", "dp", "--llm-base-url", server.base_url]
        argv += ["--llm-model", "m", "A nurse told a reporter that a patient has HIV."]
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "more characters not printed" in out and len(out) < 8000


def test_config_from_env(monkeypatch) -> None:
    monkeypatch.delenv("PCHECK_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PCHECK_LLM_MODEL", raising=False)
    with pytest.raises(LLMConfigError, match="--llm-base-url"):
        LLMConfig.from_env()
    monkeypatch.setenv("PCHECK_LLM_BASE_URL", "http://127.0.0.1:1/v1/")
    monkeypatch.setenv("PCHECK_LLM_MODEL", "m")
    assert LLMConfig.from_env().base_url == "http://127.0.0.1:1/v1"


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ('```json\n{"a": 1}\n```', True),
        ('Sure! {"a": {"b": "}"}} done', True),
        ("no json", False),
        ("[1, 2]", False),
        ("{broken", False),
    ],
)
def test_parse_json_answer(text: str, ok: bool) -> None:
    if ok:
        assert isinstance(parse_json_answer(text), dict)
    else:
        with pytest.raises(ValueError):
            parse_json_answer(text)


def test_schema_checks() -> None:
    good = norm_from_answer(
        "164.502(a)(1)(iv)",
        {**json.loads(GOOD), "references": {"164.508": "support", "164.999": "exception"}},
        "m",
        ["164.508"],
    )
    assert good.refs == (("164.508", "support"),) and good.provenance == "llm:m"
    assert (
        norm_from_answer("x", {**json.loads(GOOD), "norm_type": "negative_norm"}, "m", []).norm_type
        == "prohibit"
    )
    for bad, message in (
        ({"norm_type": "maybe"}, "norm_type"),
        ({"norm_type": "permit", "sender_is_subject": "perhaps"}, "sender_is_subject"),
        ({"norm_type": "permit", "sender": [1]}, "sender"),
        ({"norm_type": "permit", "references": {"164.508": "because"}}, "references"),
    ):
        with pytest.raises(ValueError, match=message):
            norm_from_answer("x", bad, "m", ["164.508"])


NODES = [
    "164.502(a)(1)(i)",
    "164.502(a)(1)(ii)",
    "164.502(a)(1)(iii)",
    "164.502(a)(1)(iv)",
    "164.502(a)(1)(v)",
]


def scripted_annotations(body: dict, n: int):
    node = node_of(body)
    repair = "not usable" in body["messages"][-1]["content"]
    if node == NODES[0]:
        return GOOD
    if node == NODES[1]:  # malformed, then fixed when asked again
        return GOOD if repair else "I think it is permitted."
    if node == NODES[2]:  # malformed twice
        return '{"norm_type": "sometimes"}'
    if node == NODES[3]:  # a 429, then fine
        return (
            ("status", 429)
            if n == 1
            else GOOD.replace('"references": {}', '"references": {"164.508": "support"}')
        )
    return ("status", 500)  # NODES[4] fails for good


def test_llm_annotator_end_to_end(shipped: KnowledgeBase, tmp_path: Path) -> None:
    with ScriptedLLM(scripted_annotations) as server:
        client = client_for(server, tmp_path, max_retries=2, concurrency=3)
        annotator = LLMAnnotator(client, shipped.tree, shipped.refs_out)
        norms, failures = annotator.annotate(NODES)
        got = {n.node: n for n in norms}
        assert sorted(got) == sorted([*NODES[:2], NODES[3]])
        assert got[NODES[3]].refs == (("164.508", "support"),)
        reasons = {f.node: f.reason for f in failures}
        assert "invalid JSON twice" in reasons[NODES[2]]
        assert "gave up" in reasons[NODES[4]]
        # the narrative of the regulation is fenced as data in the prompt
        prompt = server.requests[0]["messages"][-1]["content"]
        assert "<<<" in prompt and ">>>" in prompt
        # a rerun resumes from the cache: only the failures are asked again
        before = len(server.requests)
        again, _ = annotator.annotate(NODES)
        assert len(again) == 3
        assert len(server.requests) - before <= 2 * 3 + 3  # the two failures (with retries) only


def test_cli_annotate_llm(shipped: KnowledgeBase, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store_path = tmp_path / "store.sqlite"
    with ScriptedLLM(lambda body, n: GOOD) as server:
        code = main(
            [
                "annotate",
                "--annotator",
                "llm",
                "--only",
                "164.502(a)(1)",
                "--llm-base-url",
                server.base_url,
                "--llm-model",
                "scripted-1",
                "--store",
                str(store_path),
            ]
        )
    out = capsys.readouterr().out
    assert code == 0 and "stored 7" in out
    with NormStore(store_path) as store:
        record = store.get("164.502(a)(1)(i)")
        assert record.status == "machine" and record.norm.provenance == "llm:scripted-1"
        assert record.norm.recipient_roles == ("individual",)


def test_cli_annotate_llm_unconfigured(capsys, monkeypatch) -> None:
    for name in ("PCHECK_LLM_BASE_URL", "PCHECK_LLM_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    code = main(["annotate", "--annotator", "llm", "--only", "164.502(a)(1)"])
    assert code == 1 and "no LLM configured" in capsys.readouterr().err
