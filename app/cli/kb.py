"""Reading the knowledge base: ``pcheck stats``, ``show``, ``define`` and ``export``."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import (
    WIDTH,
    CliError,
    load_kb,
    print_json,
    wrap,
)
from privacy_checklist.app.cli.options import STATS_STORE_HELP, json_option, store_option
from privacy_checklist.app.views import node_report
from privacy_checklist.kg.kb import KnowledgeBase

SHOWN_REFS_IN = 40  # references into a node printed; --json has them all
SHOWN_CHILDREN = 12
SHOWN_DEFINITION_LINES = 6


def cmd_stats(args: argparse.Namespace) -> int:
    kb = load_kb(args)
    if args.json:
        print_json(kb.stats())
        return 0
    print_stats(kb)
    return 0


def print_stats(kb: KnowledgeBase) -> None:
    """The knowledge base's sources and counts, one per line."""
    stats = kb.stats()
    refs = stats["references"]
    rows = [
        ("nodes", stats["nodes"]),
        *[(f"  {kind}", count) for kind, count in stats["nodes_by_kind"].items()],
        ("leaves", stats["leaves"]),
        ("internal nodes", stats["internal_nodes"]),
        ("subsumption (parent-child) edges", stats["subsumption_edges"]),
        ("internal references", refs["internal"]),
        *[(f"  via {via}", count) for via, count in refs["by_via"].items()],
        ("  to the nearest existing ancestor", refs["to_ancestor"]),
        ("external references", refs["external"]),
        ("unresolved citations", refs["unresolved"]),
        ("definitions", stats["definitions"]["total"]),
        *[(f"  in § {sec}", n) for sec, n in stats["definitions"]["by_section"].items()],
        ("repaired or odd places in the pages", sum(stats["anomalies"].values())),
    ]
    print(f"Knowledge base: {kb.path}")
    for source in stats["sources"]:
        print(f"  Part {source['part']}: {source['url']} (up to date as of {source['up_to_date']})")
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>6}")


def print_node(kb: KnowledgeBase, node_id: str, *, spec: bool = False) -> None:
    """A node as ``pcheck show`` prints it (``spec``: with its full specification)."""
    report = node_report(kb, node_id)
    print(f"{report['id']}  ({report['kind']})")
    print(
        "Path: "
        + " › ".join(
            p["heading"] + (f" {p['title']}" if p["title"] and p["heading"].startswith("(") else "")
            for p in report["path"]
        )
    )
    if report["title"]:
        print(f"Heading: {report['title']}")
    print("Text:")
    print(wrap(report["text"]) if report["text"] else "  (no text of its own)")
    if report["children"]:
        print(
            f"Children ({len(report['children'])}): "
            + ", ".join(report["children"][:SHOWN_CHILDREN])
            + (" ..." if len(report["children"]) > SHOWN_CHILDREN else "")
        )
    if spec:
        _print_specification(kb, report["id"])
    _print_references(report)
    _print_definitions(report)


def _print_specification(kb: KnowledgeBase, node_id: str) -> None:
    print("Full specification (root to node):")
    for line in kb.full_specification(node_id).split("\n"):
        indent = "  " + " " * (len(line) - len(line.lstrip(" ")))
        print(
            textwrap.fill(
                line.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent + "  "
            )
        )


def _print_references(report: dict[str, Any]) -> None:
    print(f"References out ({len(report['refs_out'])}):")
    for ref in report["refs_out"]:
        target = ref["target"] or "(outside 45 CFR 160-164)"
        flag = "" if ref["exact"] else "  [cited paragraph missing: nearest ancestor]"
        print(f"  → {target:<34} “{ref['text']}” [{ref['start']}:{ref['end']}] {ref['via']}{flag}")
    print(f"References in ({len(report['refs_in'])}):")
    for ref in report["refs_in"][:SHOWN_REFS_IN]:
        print(f"  ← {ref['source']:<34} “{ref['text']}”")
    if len(report["refs_in"]) > SHOWN_REFS_IN:
        print(f"  ... and {len(report['refs_in']) - SHOWN_REFS_IN} more (use --json)")


def _print_definitions(report: dict[str, Any]) -> None:
    print(f"Definitions of the terms it uses ({len(report['definitions'])}):")
    for d in report["definitions"]:
        where = "" if d["in"] == report["id"] else f" (used in {d['in']})"
        lines = d["text"].split("\n")
        print(f"  {d['term']}{where} — {d['node']}, in force for {d['scope']}:")
        for line in lines[:SHOWN_DEFINITION_LINES]:
            print(wrap(line if len(line) < 400 else line[:400] + " ...", "      "))
        if len(lines) > SHOWN_DEFINITION_LINES:
            more = len(lines) - SHOWN_DEFINITION_LINES
            print(f"      ... ({more} more paragraphs: pcheck show '{d['node']}')")


def cmd_show(args: argparse.Namespace) -> int:
    kb = load_kb(args)
    try:
        if args.json:
            print_json(node_report(kb, args.id))
        else:
            print_node(kb, args.id, spec=args.spec)
    except KeyError as exc:
        raise CliError(exc.args[0]) from exc
    return 0


def cmd_define(args: argparse.Namespace) -> int:
    kb = load_kb(args)
    try:
        definition = kb.define(args.term, args.at)
    except KeyError as exc:
        raise CliError(exc.args[0]) from exc
    if args.json:
        print_json(definition.to_json())
    else:
        print(f"{definition.term} — {definition.node}, in force for {definition.scope}")
        print(wrap(definition.text))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the export beside ``--out`` and rename it into place (see ``kg.atomic``)."""
    from privacy_checklist.kg import atomic

    kb = load_kb(args)
    out = Path(args.out)

    def fill(tmp: Path) -> None:
        if args.format == "json":
            tmp.write_text(
                json.dumps(kb.export_json(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
        elif args.format == "graphml":
            import networkx as nx

            nx.write_graphml(kb.to_networkx(), tmp)
        else:
            kb.to_rdf().serialize(destination=tmp, format="turtle")

    try:
        atomic.replace_file(out, fill)
    except atomic.InterruptedAfterCommit:
        print(f"pcheck export: interrupted; {out} was written", file=sys.stderr)
        return 130
    except atomic.OutputRefused as exc:
        raise CliError(f"{out}: not written, {exc.reason}") from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CliError(f"{out}: cannot write there ({reason}); choose another --out") from exc
    print(f"Wrote {out} ({args.what}, {args.format}, {out.stat().st_size:,} bytes)")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        help="counts: nodes, references, definitions",
        description="Counts of the knowledge base: nodes by kind, leaves, internal "
        "nodes, subsumption edges, internal and external references, unresolved "
        "citations, definitions by section; with --json also the norms by type as everything "
        "reads them (the editors' store winning).",
    )
    json_option(p)
    store_option(p, STATS_STORE_HELP)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "show",
        help="one node: path, text, references, definitions",
        description="Show a node (a paragraph id such as 164.502(a)(1)(i), a section "
        "such as 164.502, 'Part 164 Subpart E'): its path, heading, text, references "
        "out and in, and the definitions of the defined terms it uses.",
    )
    p.add_argument("id", help="node id, e.g. '164.502(a)(1)(i)' (quote the parentheses)")
    p.add_argument(
        "--spec", action="store_true", help="also print the full specification, root to node"
    )
    json_option(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "define",
        help="the definition of a term in force at a node",
        description="Look up a defined term; with --at, the definition in force at "
        "that node (the narrowest scope that contains it).",
    )
    p.add_argument("term", help="a defined term, e.g. 'covered entity' (plurals work)")
    p.add_argument("--at", metavar="ID", default=None, help="node where the term is read")
    json_option(p)
    p.set_defaults(func=cmd_define)

    p = sub.add_parser(
        "export",
        help="write the tree as JSON, GraphML or Turtle",
        description="Export the regulation tree with its references and definitions. "
        "JSON: {nodes: [{id, parent, kind, title, text}], refs: [{source, target, start, "
        "end, text, external}], definitions: [{term, node, scope, text}]}.",
    )
    p.add_argument(
        "--what", choices=["tree"], default="tree", help="what to export (default: tree)"
    )
    p.add_argument("--format", choices=["json", "graphml", "ttl"], required=True)
    p.add_argument("--out", required=True, metavar="FILE")
    p.set_defaults(func=cmd_export, on_interrupt="nothing was changed")
