"""Retrieval: tokens, each method, incremental indexes, a real Chroma server, evaluation."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from privacy_checklist.app.cli import main
from privacy_checklist.ingest.cases import read_cases
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.retrieval.base import Filters, QueryError, documents
from privacy_checklist.retrieval.bm25 import BM25Retriever
from privacy_checklist.retrieval.cies import read_case
from privacy_checklist.retrieval.evaluate import gold_ids, score_case
from privacy_checklist.retrieval.index import RetrievalIndex
from privacy_checklist.retrieval.text import TOKENIZER, tokenize

POLICE = (
    "A police detective investigating a hit-and-run asked the emergency room for the blood "
    "alcohol test results of the injured driver, who was a suspect; the hospital disclosed them."
)


@pytest.fixture(scope="module")
def index(shipped: KnowledgeBase, tmp_path_factory) -> RetrievalIndex:
    return RetrievalIndex(shipped, tmp_path_factory.mktemp("index"), embeddings=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("§ 164.512(f)(1)", ["164.512(f)(1)", "164.512"]),
        ("paragraph (a) applies", ["paragraph", "(a)", "appli"]),
        ("Disclosures to law enforcement officials", ["disclosur", "law", "enforc", "offici"]),
        ("the and of", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_bm25_finds_law_enforcement(index: RetrievalIndex) -> None:
    hits = index.search(POLICE, "bm25", 10)
    assert len(hits) == 10 and all(h.method == "bm25" for h in hits)
    assert any(h.node.startswith("164.512(f)") for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_filters_and_k(index: RetrievalIndex) -> None:
    only = index.search(POLICE, "bm25", 5, Filters(norm_types=frozenset({"prohibit"})))
    assert only and all(index.by_node[h.node].norm_type == "prohibit" for h in only)
    section = index.search(POLICE, "bm25", 5, Filters(sections=frozenset({"164.510"})))
    assert section and all(h.node.startswith("164.510(") for h in section)
    everything = index.search("covered entity", "bm25", 100_000)
    assert 0 < len(everything) <= len(index.docs)


def test_bad_queries(index: RetrievalIndex) -> None:
    for bad in ("", "   ", None, 42):
        with pytest.raises(QueryError):
            index.search(bad, "bm25")
    with pytest.raises(ValueError, match="unknown method"):
        index.search("x", "magic")
    with pytest.warns(UserWarning, match="truncated"):
        hits = index.search("disclosure to police " * 10_000, "bm25", 3)
    assert len(hits) == 3


def test_incremental_rebuild(shipped: KnowledgeBase, tmp_path: Path) -> None:
    docs = documents(shipped)
    first = BM25Retriever(docs)
    first.save(tmp_path / "bm25.json")
    changed = [*docs[:-1], replace(docs[-1], spec=docs[-1].spec + " amended", digest="changed")]
    again = BM25Retriever(changed, cached=BM25Retriever.cached(tmp_path / "bm25.json"))
    assert again.reused == len(docs) - 1
    (tmp_path / "bm25.json").write_text("{damaged")
    assert BM25Retriever.cached(tmp_path / "bm25.json") == {}  # rebuilt, never silently empty


def test_tokens_made_another_way_are_not_reused(shipped: KnowledgeBase, tmp_path: Path) -> None:
    """Saved tokens carry how they were made (the stemmer, the stop words): tokens saved by
    another stemmer would silently rank with stems no query makes."""
    path = tmp_path / "bm25.json"
    BM25Retriever(documents(shipped)).save(path)
    assert len(BM25Retriever.cached(path)) == len(documents(shipped))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["tokenizer"] == TOKENIZER
    data["tokenizer"] = "porter:an older list"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert BM25Retriever.cached(path) == {}
    del data["tokenizer"]  # saved before the tokens said how they were made
    path.write_text(json.dumps(data), encoding="utf-8")
    assert BM25Retriever.cached(path) == {}


def test_the_stemmer_is_snowball_english_and_never_imports_nltk() -> None:
    code = (
        "import sys\n"
        "from privacy_checklist.retrieval.text import TOKENIZER, tokenize\n"
        "print(tokenize('The hospital disclosed the records to employers'), 'nltk' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['hospit',", "'disclos',", "'record',", "'employ']", "False"]


def test_read_case(shipped: KnowledgeBase) -> None:
    reading = read_case(POLICE, shipped.roles, shipped.attributes)
    assert {"law enforcement official", "health care provider", "covered entity"} <= set(
        reading.roles
    )
    assert reading.roles["law enforcement official"] in ("police detective", "police", "detective")


def test_ci_es_and_hybrid(index: RetrievalIndex) -> None:
    ci = index.search(POLICE, "ci-es", 10)
    assert ci and all(
        "recipient" in h.via or "sender" in h.via or "information" in h.via for h in ci
    )
    assert any(index.kb.norms[h.node].recipient_roles == ("law enforcement official",) for h in ci)
    hybrid = index.search(POLICE, "hybrid", 10)
    assert len(hybrid) == 10 and hybrid[0].via  # which legs found it
    assert any(h.node.startswith("164.512(f)") for h in hybrid)


def test_embedding_in_chroma_incremental(shipped: KnowledgeBase, tmp_path: Path) -> None:
    from privacy_checklist.retrieval.embedding import EmbeddingRetriever

    docs = [d for d in documents(shipped) if d.section in ("164.510", "164.512")][:60]
    first = EmbeddingRetriever(docs, tmp_path / "chroma")
    assert first.updated == len(docs)
    hits = first.search("telling the patient's family about her condition", 5)
    assert hits and all(0 < h.score <= 1 for h in hits)
    assert any(h.node.startswith("164.510(b)") for h in hits)
    again = EmbeddingRetriever(docs[:-1], tmp_path / "chroma")
    assert again.updated == 0 and again.collection.count() == len(docs) - 1
    # the search is exact: every stored norm scored, the same order as cosine by hand
    ranked = again.search("telling the patient's family about her condition", len(docs))
    assert len(ranked) == len(docs) - 1 and docs[-1].node not in {h.node for h in ranked}
    query = again.embed(["telling the patient's family about her condition"])[0]
    stored = again.collection.get(include=["embeddings"])
    by_hand = sorted(
        (
            (i, round(float(sum(a * b for a, b in zip(v, query, strict=True))), 4))
            for i, v in zip(stored["ids"], stored["embeddings"], strict=True)
        ),
        key=lambda item: (-item[1], item[0]),
    )
    assert [h.node for h in ranked] == [i for i, s in by_hand if s > 0]


_SEARCH_IN_A_PROCESS = """
import json, sys
from pathlib import Path
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.retrieval.base import documents
from privacy_checklist.retrieval.embedding import EmbeddingRetriever
kb = kbmod.load()
docs = [d for d in documents(kb) if d.section in ("164.508", "164.510", "164.512")]
retriever = EmbeddingRetriever(docs, Path(sys.argv[1]))
queries = [
    "A detective asked the emergency room for a driver's blood test and the nurse gave it.",
    "The clinic faxed her whole chart to her employer's human resources office.",
    "A researcher wants ten years of charts; the IRB approved a waiver of authorization.",
]
print(json.dumps([[h.node for h in retriever.search(q, 60)] for q in queries]))
"""


def test_embedding_search_is_the_same_in_every_process(tmp_path: Path) -> None:
    """Chroma's graph search is approximate and varied from one process to the next; the
    search over its stored vectors gives the same norms whatever the process."""
    runs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", _SEARCH_IN_A_PROCESS, str(tmp_path / "chroma")],
            capture_output=True,
            text=True,
            check=True,
            env={**__import__("os").environ, "PYTHONHASHSEED": seed},
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0] == runs[1] and all(len(r) == 60 for r in runs[0])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_embedding_through_a_chroma_server(shipped: KnowledgeBase, tmp_path: Path) -> None:
    from privacy_checklist.retrieval.embedding import EmbeddingRetriever

    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    assert chroma, "the chroma CLI comes with the chromadb package"
    port = _free_port()
    server = subprocess.Popen(
        [
            chroma,
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2)
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    pytest.fail("chroma run did not start")
                time.sleep(0.5)
        docs = [d for d in documents(shipped) if d.section == "164.512"][:20]
        remote = EmbeddingRetriever(docs, chroma_url=f"http://127.0.0.1:{port}")
        assert remote.updated == len(docs)
        assert remote.search("disclosure to a coroner", 3)
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.parametrize(
    ("ranked", "gold", "level", "hit1", "hit10"),
    [
        (["164.512(f)(1)(ii)"], ["164.512(f)"], "paragraph", 1.0, 1.0),  # under the gold one
        (["164.512(f)"], ["164.512(f)(1)"], "paragraph", 0.0, 0.0),  # broader is no hit
        (["164.512(a)"], ["164.512(f)"], "section", 1.0, 1.0),
        (["164.502(a)", "164.512(k)"], ["164.512(f)"], "section", 0.0, 1.0),
    ],
)
def test_score_case(ranked, gold, level, hit1, hit10) -> None:
    scores = score_case(ranked, gold, level)
    assert (scores["hit@1"], scores["hit@10"]) == (hit1, hit10)


def test_read_cases(shared: Path) -> None:
    real = read_cases(shared / "cases" / "goldcoin_real_dev_cases_hipaa_applicability.csv")
    assert len(real) == 72 and sum(1 for c in real if gold_ids(c)) == 36
    assert all(g.startswith("164.") or g.startswith("160.") for c in real for g in gold_ids(c))
    val = read_cases(shared / "cases" / "val_generate_cases_hipaa_applicability.csv")
    assert gold_ids(val[0])[0] == "164.510(b)(4)"
    with pytest.raises(ValueError, match="no such case file"):
        read_cases(shared / "cases" / "missing.csv")


def test_cli_search_and_eval(shared: Path, tmp_path: Path, capsys) -> None:
    common = ["--index", str(tmp_path / "idx"), "--no-embeddings"]
    assert main(["search", POLICE, "--method", "bm25", "-k", "3", "--json", *common]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3 and {"node", "score", "method", "text"} <= set(hits[0])
    assert main(["search", "   ", *common]) == 1
    assert "empty" in capsys.readouterr().err
    code = main(
        [
            "retrieval-eval",
            "--cases",
            str(shared / "cases" / "val_generate_cases_hipaa_applicability.csv"),
            "--method",
            "bm25",
            "--limit",
            "8",
            "--json",
            *common,
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and set(result) == {"n", "skipped", "section", "paragraph", "slices"}
    assert set(result["section"]) == {"hit@1", "hit@5", "hit@10", "recall@10", "mrr"}
    # the slices by gold label count every case once
    assert sum(part["n"] for part in result["slices"].values()) == result["n"] > 0
    assert set(result["slices"]) <= {"permit", "prohibit", "not_applicable", "unlabelled"}


def test_fast_scores_equal_rank_bm25(index: RetrievalIndex) -> None:
    """Differential test: our inverted index gives rank-bm25's own scores."""
    import numpy as np

    bm25 = index.method("bm25")
    for query in (POLICE, "psychotherapy notes authorization", "164.512(f) law enforcement law"):
        terms = tokenize(query)
        assert np.allclose(bm25.scores(terms), bm25.bm25.get_scores(terms))


def test_unreachable_chroma_server_is_reported(
    shipped: KnowledgeBase, tmp_path: Path, capsys
) -> None:
    code = main(
        [
            "search",
            "disclosure to police",
            "--method",
            "embedding",
            "--index",
            str(tmp_path / "idx"),
            "--chroma-url",
            f"http://127.0.0.1:{_free_port()}",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "cannot be opened" in err and err.count("\n") == 1


def test_bm25_hits_carry_matched_spans(index: RetrievalIndex) -> None:
    hit = index.search("law enforcement official", "bm25", 1)[0]
    spec = index.by_node[hit.node].spec
    words = {spec[a:b].lower() for a, b in hit.spans}
    assert hit.spans and {"law", "enforcement"} <= words


def test_shipped_kb_index_goes_to_the_cache(shipped, tmp_path, monkeypatch) -> None:
    from privacy_checklist.retrieval.index import default_index_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    where = default_index_dir(shipped)
    # never inside the package, even when the package folder is writable (an editable install)
    assert where.is_relative_to(tmp_path / "privacy-checklist" / "index")
