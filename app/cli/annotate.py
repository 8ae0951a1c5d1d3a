"""Reading the paragraphs as norms: ``pcheck annotate`` (by the rules into norms.json, or by an
LLM into the editors' store) and ``pcheck annotate-eval`` (the norms against an expert file)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError, load_kb, open_store, print_json
from privacy_checklist.app.cli.options import (
    ANNOTATIONS_STORE_HELP,
    COMPARED_STORE_HELP,
    json_option,
    llm_endpoint_options,
    llm_request_options,
    store_option,
)
from privacy_checklist.kg.conditions import CatalogueError
from privacy_checklist.kg.kb import KnowledgeBase

SHOWN_FAILURES = 20  # failed paragraphs of an LLM annotation printed


def cmd_annotate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    kb = load_kb(args)
    if args.only and args.only not in kb.tree:
        from privacy_checklist.kg.search import unknown_id

        raise CliError(f"--only: {unknown_id(kb.tree, args.only)}")
    from privacy_checklist.kg.norms import annotatable

    if args.annotator == "llm":
        return _annotate_llm(args, kb, annotatable(kb.tree, args.only))

    todo = annotatable(kb.tree, args.only)
    bar = tqdm(
        total=len(todo), desc="annotating (rules)", unit="paragraph", file=sys.stderr, disable=None
    )
    try:
        fresh = kb.annotate_rules(args.only, progress=bar.update)
    except CatalogueError as exc:
        raise CliError(
            f"the curated norm readings do not fit the regulation text ({exc}); nothing was written"
        ) from exc
    finally:
        bar.close()
    # norms.json holds the machine annotation only: the editors' store stays apart
    norms = {**kb.machine_norms, **fresh} if kb.has_norms else fresh
    if kb.path is None or not os.access(kb.path, os.W_OK):
        raise CliError(
            f"{kb.path}: not writable; pass --kb DIR for a knowledge base you can change"
        )
    target = kb.write_norms(norms)
    counts = {
        t: sum(1 for n in fresh.values() if n.norm_type == t)
        for t in ("permit", "prohibit", "definition")
    }
    print(f"Annotated {len(fresh)} paragraphs with the rules annotator: {counts}; wrote {target}")
    return 0


def _annotate_llm(args: argparse.Namespace, kb: KnowledgeBase, todo: list[str]) -> int:
    from tqdm import tqdm

    from privacy_checklist.kg.store import StoreError
    from privacy_checklist.reasoning.llm.annotate import LLMAnnotator
    from privacy_checklist.reasoning.llm.client import LLMClient, LLMConfig, LLMError

    try:
        config = LLMConfig.from_env(
            args.llm_base_url,
            args.llm_model,
            timeout=args.llm_timeout,
            concurrency=args.concurrency,
        )
    except LLMError as exc:
        raise CliError(str(exc)) from exc
    roles = kb.role_resolver(embeddings=False)

    def resolve(phrases: Any) -> tuple[str, ...]:
        found = [roles.resolve(p, 1) for p in phrases]
        return tuple(dict.fromkeys(m[0].target for m in found if m))

    client = LLMClient(config)
    annotator = LLMAnnotator(client, kb.tree, kb.refs_out, resolve)
    bar = tqdm(
        total=len(todo),
        desc=f"annotating ({client.name})",
        unit="paragraph",
        file=sys.stderr,
        disable=None,
    )
    norms, failures = annotator.annotate(todo, progress=lambda: bar.update(1))
    bar.close()
    try:
        with open_store(args) as store:
            written = store.put_machine(norms, client.name)
    except StoreError as exc:
        raise CliError(f"{exc} (the annotations were not stored)") from exc
    dropped = annotator.dropped
    print(
        f"Annotated {len(norms)} of {len(todo)} paragraphs with {client.name}; stored {written} "
        f"(validated or rejected ones kept); {len(failures)} failed"
        + (
            f"; {len(dropped)} condition(s) dropped (a kind not in the vocabulary or words "
            "not in the text)"
            if dropped
            else ""
        )
    )
    for failure in failures[:SHOWN_FAILURES]:
        print(f"  failed {failure.node}: {failure.reason}", file=sys.stderr)
    for item in dropped[:SHOWN_FAILURES]:
        print(f"  dropped a condition of {item.node}: {item.reason}", file=sys.stderr)
    return 0 if not failures else 3


def _loso(kb: KnowledgeBase, gold: dict[str, dict[str, Any]], as_json: bool) -> int:
    """``annotate-eval --loso``: per section of the file, the rules annotator in-sample and
    with its switches chosen on the other sections (:mod:`privacy_checklist.kg.switches`)."""
    from privacy_checklist.kg.norms import PAPER_TYPES, RulesAnnotator
    from privacy_checklist.kg.switches import (
        figures_of,
        gold_types,
        switches_leave_one_section_out,
    )

    types = {k: v for k, v in gold_types(gold, PAPER_TYPES).items() if k in kb.tree.nodes}
    if not types:
        raise CliError("no paragraph of the file is in the knowledge base's tree")
    rules = RulesAnnotator(kb.tree)
    first = RulesAnnotator(kb.tree, structure=False)
    readings = {
        "rules annotator, its statements read (rules-2) with the shipped switches (its grammar "
        "was written with every section of the file in view: in-sample)": figures_of(
            types, {k: rules.norm_type(k) for k in types}
        ),
        "rules annotator, rules-2, its switches chosen on the other sections, "
        "leave-one-section-out": switches_leave_one_section_out(kb.tree, types),
        "rules annotator, the earliest cue (rules-1; in-sample)": figures_of(
            types, {k: first.norm_type(k) for k in types}
        ),
    }
    for reading in readings.values():
        reading.pop("predicted", None)
    if as_json:
        print_json(readings)
        return 0
    for name, r in readings.items():
        p = r["pooled"]
        print(f"{name}:")
        print(
            f"  all {p['n']}: accuracy {p['accuracy']:.3f}, macro-F1 {p['macro_f1']:.3f}, "
            f"prohibit recall {p['prohibit_recall']}"
        )
        for section, f in r["sections"].items():
            chosen = r.get("switches", {}).get(section)
            on = ", ".join(k for k, v in (chosen or {}).items() if v) or "none"
            print(
                f"  {section} ({f['n']}): accuracy {f['accuracy']:.3f}, "
                f"macro-F1 {f['macro_f1']:.3f}" + (f"; switches on: {on}" if chosen else "")
            )
    return 0


def cmd_eval_norms(args: argparse.Namespace) -> int:
    """``pcheck annotate-eval``: the current norms (the store's winning) against an expert file."""
    from privacy_checklist.kg.norms import evaluate_against, read_paper_file

    kb = load_kb(args)
    try:
        gold = read_paper_file(Path(args.gold))
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.loso:
        return _loso(kb, gold, args.json)
    with open_store(args) as store:
        norms = store.effective(kb.norms)
    result = evaluate_against(
        norms, gold, kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
    )
    if args.json:
        print_json(result)
        return 0
    print(f"{args.gold}: {result['n']} paragraphs")
    print(
        f"  norm type accuracy {result['norm_type_accuracy']:.3f}, "
        f"macro-F1 {result['norm_type_macro_f1']:.3f}"
    )
    for kind, row in result["per_type"].items():
        print(
            f"  {kind:<11} precision {row['precision']:.3f} recall {row['recall']:.3f} "
            f"F1 {row['f1']:.3f} (support {row['support']})"
        )
    print("  confusion (rows gold, columns ours): " + json.dumps(result["confusion"]))
    print(
        "  agreement on resolved graph nodes: "
        + ", ".join(f"{k} {v:.3f}" for k, v in result["agreement"].items() if v is not None)
    )
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "annotate",
        help="read every paragraph as Contextual Integrity (norm type, parties, information ...)",
        description="Annotate the paragraphs of Parts 160 and 164 (or those under --only) and "
        "write norms.json into the knowledge base (--kb DIR for one you can change). The rules "
        "annotator needs no LLM.",
    )
    p.add_argument("--annotator", choices=["rules", "llm"], default="rules")
    p.add_argument(
        "--only", metavar="NODE", help="only the paragraphs under this node, e.g. 164.502"
    )
    llm_endpoint_options(p)
    llm_request_options(p, retries=False, concurrency_help="requests at once (default 4)")
    store_option(p, ANNOTATIONS_STORE_HELP)
    p.set_defaults(func=cmd_annotate, on_interrupt="nothing was changed")

    p = sub.add_parser(
        "annotate-eval",
        help="agreement of the norms with an expert file in the paper's format",
        description="Compare the knowledge base's current norms (the store's validated ones "
        "winning) with a file in the paper's format: norm type accuracy and macro-F1, the "
        "confusion matrix, and agreement of sender, recipient, subject and information type "
        "measured on resolved graph nodes.",
    )
    p.add_argument("--gold", required=True, metavar="FILE")
    p.add_argument(
        "--loso",
        action="store_true",
        help="leave-one-section-out instead: per section of the file, the rules annotator "
        "(in-sample, and with its switches — ontologies/norm_structure.json — chosen on the "
        "other sections), and the first rules annotator (the earliest cue)",
    )
    json_option(p)
    store_option(p, COMPARED_STORE_HELP)
    p.set_defaults(func=cmd_eval_norms)
