"""The role and attribute graphs: ``pcheck roles|attributes resolve`` (phrases to the law's roles
or information types) and ``pcheck roles|attributes evaluate`` (resolution accuracy on a labeled
list)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.common import CliError, load_kb, print_json
from privacy_checklist.app.cli.options import json_option

if TYPE_CHECKING:
    from privacy_checklist.kg.concepts import Match, Resolver

SHOWN_PHRASE = 80  # characters of a phrase in a text line


def _phrases(args: argparse.Namespace) -> list[str]:
    """The phrases of the command line and of ``--file`` (one a line, ``-``: stdin)."""
    phrases = list(args.phrase or [])
    if args.file:
        try:
            raw = Path(args.file).read_bytes() if args.file != "-" else sys.stdin.buffer.read()
            text = raw.decode("utf-8")
        except OSError as exc:
            raise CliError(f"{args.file}: cannot read ({exc.strerror or exc})") from exc
        except UnicodeDecodeError as exc:
            raise CliError(f"{args.file}: not UTF-8 text (bad byte at offset {exc.start})") from exc
        if "\x00" in text:
            raise CliError(f"{args.file}: binary data, not one phrase a line")
        phrases += [line.strip() for line in text.splitlines() if line.strip()]
    if not phrases:
        raise CliError("no phrase given: pass PHRASE... or --file F (one phrase a line)")
    return phrases


def _resolver(args: argparse.Namespace) -> Resolver:
    """The resolver of ``args.graph`` (roles or attributes), with or without embeddings."""
    kb = load_kb(args)
    if args.graph == "roles":
        return kb.role_resolver(embeddings=args.embeddings)
    return kb.attribute_resolver(embeddings=args.embeddings)


def _match_json(match: Match, roles: bool) -> dict[str, Any]:
    row: dict[str, Any] = (
        {"role": match.target}
        if roles
        else {
            "attribute": match.matched,
            "information_type": match.target if match.reached else None,
        }
    )
    row.update(
        {"score": match.score, "path": list(match.path), "matched": match.matched, "via": match.via}
    )
    return row


def cmd_resolve(args: argparse.Namespace) -> int:
    resolver = _resolver(args)
    roles = args.graph == "roles"
    for phrase in _phrases(args):
        matches = resolver.resolve(phrase, args.k)
        if args.json:
            rows = [_match_json(m, roles) for m in matches]
            print(json.dumps({"phrase": phrase, "matches": rows}, ensure_ascii=False))
            continue
        shown = phrase if len(phrase) <= SHOWN_PHRASE else phrase[: SHOWN_PHRASE - 3] + "..."
        if not matches:
            print(f"{shown}: no match")
        for rank, m in enumerate(matches, start=1):
            what = m.target if (roles or m.reached) else f"{m.matched} (no HIPAA information type)"
            print(f"{shown}: {rank}. {what}  [{m.score:.2f}]  " + " → ".join(m.path[1:]))
    return 0


def cmd_eval_resolution(args: argparse.Namespace) -> int:
    """``pcheck roles|attributes evaluate``: top-1 accuracy of the resolver on labeled phrases."""
    from privacy_checklist.kg.attributes import information_type
    from privacy_checklist.kg.labels import LabelFileError, read_labels
    from privacy_checklist.kg.labels import evaluate as evaluate_resolution

    kb = load_kb(args)
    roles = args.graph == "roles"
    try:
        rows = read_labels(Path(args.labels))
    except LabelFileError as exc:
        raise CliError(str(exc)) from exc
    resolver = (
        kb.role_resolver(embeddings=args.embeddings)
        if roles
        else kb.attribute_resolver(embeddings=args.embeddings)
    )
    label_of = (lambda m: m.target if m else "none") if roles else information_type
    result = evaluate_resolution(resolver, rows, label_of)
    if args.json:
        print_json(result)
        return 0
    print(
        f"{args.labels}: top-1 accuracy {result['accuracy']:.3f} "
        f"({result['correct']}/{result['n']})"
    )
    for label, counts in result["per_label"].items():
        print(f"  {label:<45} {counts['correct']:>4}/{counts['n']:<4}")
    if result["misses"]:
        print(f"misses ({len(result['misses'])}):")
        for miss in result["misses"]:
            print(
                f"  line {miss['line']}: {miss['phrase']!r}: "
                f"expected {miss['expected']}, got {miss['got']}"
            )
    return 0


def register(sub: Any) -> None:
    for graph, what in (("roles", "regulatory roles"), ("attributes", "information types")):
        group = sub.add_parser(
            graph,
            help=f"the {graph[:-1]} graph: resolve phrases to {what}",
            description=f"Work with the {graph[:-1]} graph.",
        )
        actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
        p = actions.add_parser(
            "resolve",
            help=f"phrases to {what}, with the paths that justify them",
            description=f"Resolve everyday phrases to {what}. Each match has a score and the "
            "path from the phrase through the matched node up the graph. With --json: one JSON "
            'object a line, {"phrase", "matches": [...]}; matches is empty when nothing fits.',
        )
        p.add_argument("phrase", nargs="*", help="phrases (quote each)")
        p.add_argument("--file", metavar="F", help="read phrases from F, one a line ('-' = stdin)")
        p.add_argument("-k", type=int, default=3, help="matches per phrase (default 3)")
        json_option(p, "one JSON object a line")
        _embeddings_option(p, "fall back to embedding similarity for unknown words (default: on)")
        p.set_defaults(func=cmd_resolve, graph=graph)
        p = actions.add_parser(
            "evaluate",
            help="top-1 accuracy on a labeled list",
            description="Resolve each phrase of a labeled list (phrase<TAB>expected, '#' comments, "
            "'a|b' for alternatives, 'none' for no match) and report top-1 accuracy, per label, "
            "and the misses.",
        )
        p.add_argument("--labels", required=True, metavar="FILE", help="the labeled list (TSV)")
        json_option(p)
        _embeddings_option(p, "fall back to embedding similarity (default: on)")
        p.set_defaults(func=cmd_eval_resolution, graph=graph)


def _embeddings_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--embeddings", action=argparse.BooleanOptionalAction, default=True, help=help)
