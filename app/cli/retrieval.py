"""Finding the norms that bear on a case: ``pcheck search``, ``pcheck retrieval-eval`` (hit@k,
recall@k and MRR against the gold regulations of court cases) and ``pcheck retrieval-tune``
(the hybrid's fusion chosen by cross-validation)."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.common import (
    CliError,
    load_kb,
    print_json,
    read_cases,
    read_text_file,
    wrap,
)
from privacy_checklist.app.cli.options import (
    cases_option,
    json_option,
    limit_option,
    retrieval_options,
)
from privacy_checklist.kg.kb import KnowledgeBase
from privacy_checklist.retrieval.index import METHODS

RETRIEVAL_METHODS = METHODS

if TYPE_CHECKING:
    from privacy_checklist.retrieval.base import Filters
    from privacy_checklist.retrieval.index import RetrievalIndex

SHOWN_TEXT = 300  # characters of a hit's paragraph printed


def _filters(args: argparse.Namespace) -> Filters:
    from privacy_checklist.retrieval.base import Filters

    return Filters(
        norm_types=frozenset(args.norm_type or ()),
        parts=frozenset(args.part or ()),
        sections=frozenset(args.section or ()),
    )


def _index(args: argparse.Namespace, kb: KnowledgeBase) -> RetrievalIndex:
    from privacy_checklist.retrieval.index import RetrievalIndex

    return RetrievalIndex(
        kb,
        Path(args.index) if args.index else None,
        args.chroma_url,
        args.model_path,
        embeddings=not args.no_embeddings,
    )


def _ranked(index: RetrievalIndex, method: str, k: int, query: str) -> list[str]:
    """The ids of the top ``k`` hits of ``method`` for ``query``."""
    return [hit.node for hit in index.search(query, method, k)]


def cmd_search(args: argparse.Namespace) -> int:
    from privacy_checklist.retrieval.base import QueryError
    from privacy_checklist.retrieval.index import IndexUnavailable

    kb = load_kb(args)
    text = args.text if args.text != "-" else read_text_file("-")
    index = _index(args, kb)
    try:
        hits = index.search(text, args.method, args.k, _filters(args))
    except (QueryError, IndexUnavailable) as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        print_json([{**h.to_json(), "text": kb.tree[h.node].text} for h in hits])
        return 0
    if not hits:
        print("no norm matched")
    norms = index.norms  # what the search ran on: the store's effective view
    for rank, hit in enumerate(hits, start=1):
        norm = norms.get(hit.node)
        kind = norm.norm_type if norm else ""
        print(f"{rank:>2}. {hit.node:<32} {hit.score:8.4f} {kind:<10} {hit.via}")
        print(wrap(kb.tree[hit.node].text[:SHOWN_TEXT], "      "))
    return 0


def cmd_eval_retrieval(args: argparse.Namespace) -> int:
    """``pcheck retrieval-eval``: each method's hits against the cases' gold regulations."""
    from tqdm import tqdm

    from privacy_checklist.retrieval.evaluate import evaluate as evaluate_retrieval
    from privacy_checklist.retrieval.evaluate import gold_ids

    kb = load_kb(args)
    cases = read_cases(args.cases, command=args.command, limit=args.limit, need_label=False)
    index = _index(args, kb)
    results = {}
    for method in args.method.split(","):
        bar = tqdm(
            total=sum(1 for c in cases if gold_ids(c)),
            desc=f"{method}",
            unit="case",
            file=sys.stderr,
            disable=None,
        )
        results[method] = evaluate_retrieval(
            cases, partial(_ranked, index, method, args.k), bar.update
        )
        bar.close()
    if args.json:
        print_json(results if len(results) > 1 else next(iter(results.values())))
        return 0
    for method, r in results.items():
        print(f"{method}: {r['n']} cases ({r['skipped']} without gold regulations skipped)")
        for level in ("section", "paragraph"):
            print(f"  {level:<9} " + "  ".join(f"{k} {v:.3f}" for k, v in r[level].items()))
        for name, part in r["slices"].items():
            print(f"  {name} ({part['n']}):")
            for level in ("section", "paragraph"):
                figures = "  ".join(f"{k} {v:.3f}" for k, v in part[level].items())
                print(f"    {level:<9} {figures}")
    return 0


def cmd_tune_retrieval(args: argparse.Namespace) -> int:
    """``pcheck retrieval-tune``: the hybrid's fusion chosen by cross-validation."""
    from tqdm import tqdm

    from privacy_checklist.retrieval.evaluate import gold_ids
    from privacy_checklist.retrieval.hybrid import Fusion
    from privacy_checklist.retrieval.tuning import (
        LEGS,
        TuningError,
        cross_validate,
        grid,
        leg_pools,
        score_fusions,
    )

    kb = load_kb(args)
    cases = [
        c
        for c in read_cases(args.cases, command=args.command, limit=args.limit, need_label=False)
        if gold_ids(c) and c.text.strip()
    ]
    if not cases:
        raise CliError(f"{args.cases}: no case with gold regulations to tune on")
    index = _index(args, kb)
    legs = [leg for leg in LEGS if leg != "embedding" or index.embeddings]
    try:
        with tqdm(
            total=len(legs) * len(cases), desc="legs", unit="search", file=sys.stderr, disable=None
        ) as bar:
            pools = leg_pools(index, cases, legs, args.cache, bar.update)
        fusions = grid(legs)
        with tqdm(
            total=len(fusions), desc="fusions", unit="fusion", file=sys.stderr, disable=None
        ) as bar:
            scored = score_fusions(index, cases, pools, fusions, args.k, bar.update)
        report = cross_validate(scored, args.folds)
    except TuningError as exc:
        raise CliError(str(exc)) from exc
    alone = Fusion(weights={leg: float(leg == "bm25") for leg in legs}, expand=0)
    bm25 = next(s for s in scored if s.fusion == alone)
    rows = range(len(cases))
    report["bm25_alone"] = {
        lv: {k: round(v, 4) for k, v in bm25.mean(rows, lv).items()}
        for lv in ("section", "paragraph")
    }
    report["cases"] = str(args.cases)
    report["legs"] = legs
    report["grid"] = len(fusions)
    if args.write:
        from privacy_checklist.retrieval.tuning import write_json

        write_json(args.write, report)
    if args.json:
        print_json(report)
        return 0
    print(
        f"{len(cases)} cases, {len(fusions)} fusions, {args.folds}-fold cross-validation "
        "(each fold measured with the fusion chosen on the others)"
    )
    for name, figures in (
        ("hybrid, leave-out", report["leave_out"]),
        ("hybrid, chosen on all (in-sample)", report["in_sample"]),
        ("bm25 alone", report["bm25_alone"]),
    ):
        print(f"{name}:")
        for level in ("section", "paragraph"):
            print(f"  {level:<9} " + "  ".join(f"{k} {v:.3f}" for k, v in figures[level].items()))
    print(f"chosen: {json.dumps(report['fusion'])}")
    if args.write:
        print(f"wrote {args.write}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "search",
        help="the norms that bear on a case or a question",
        description="Retrieve norms for TEXT (a case narrative; '-' reads stdin). Methods: bm25 "
        "(full specification), bm25-text (own text), bm25-rewrite (query plus the law's terms for "
        "its roles and information), embedding (Chroma), ci-es (annotated roles and information "
        "types), hybrid (reciprocal rank fusion of them all, then supports and exceptions).",
    )
    p.add_argument("text", help="the query, or - for stdin")
    p.add_argument("--method", choices=RETRIEVAL_METHODS, default="hybrid")
    json_option(p)
    p.add_argument("--norm-type", action="append", choices=["permit", "prohibit", "definition"])
    p.add_argument("--part", action="append", help="restrict to a part: 160, 162 or 164")
    p.add_argument("--section", action="append", help="restrict to a section, e.g. 164.512")
    retrieval_options(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "retrieval-eval",
        help="hit@k, recall@k and MRR against the gold regulations of court cases",
        description="Search each case of a case CSV (../shared/data/cases) and compare the top k "
        "with its gold regulations, at section and paragraph level; cases with no gold "
        "regulations are skipped and counted.",
    )
    cases_option(p)
    p.add_argument(
        "--method",
        default="hybrid",
        help=f"one or more of {', '.join(RETRIEVAL_METHODS)}, comma-separated",
    )
    limit_option(p)
    json_option(p)
    retrieval_options(p)
    p.set_defaults(func=cmd_eval_retrieval, norm_type=None, part=None, section=None)

    p = sub.add_parser(
        "retrieval-tune",
        help="choose the hybrid's fusion by cross-validation on cases with gold regulations",
        description="Search each case once with every leg (bm25, bm25-text, bm25-rewrite, "
        "embedding, ci-es, checklist; cached in --cache so a stopped run resumes), then try every "
        "fusion of "
        "the grid (a weight 0, 1 or 2 per leg, sections first or not, supports added or not) "
        "through the hybrid's own code. Prints the leave-out estimate (per fold, the fusion best "
        "on the other folds, measured on the fold), the in-sample figure of the fusion chosen on "
        "all the cases, and BM25 alone. Tune on synthetic cases only "
        "(../shared/data/cases/train_generate_cases_hipaa_applicability.csv), never on the real "
        "ones; --write retrieval/data/hybrid.json ships the choice.",
    )
    cases_option(p)
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--cache", type=Path, help="the legs' ranked pools, to resume a stopped run")
    p.add_argument("--write", type=Path, help="write the report and the chosen fusion here")
    limit_option(p)
    json_option(p)
    retrieval_options(p)
    p.set_defaults(func=cmd_tune_retrieval)
