"""``pcheck norms``: the editors' store (show, history, edit, validate, reject, export, import).

Versions count from the knowledge base's machine annotation (version 0); every change names the
version it was made against, so a stale one is refused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.common import CliError, load_kb, open_store, print_json, printable
from privacy_checklist.app.cli.options import EDITORS_STORE_HELP, json_option, store_option

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.kg.norms import Norm
    from privacy_checklist.kg.store import NormStore, Record

Baseline = Mapping[str, "Norm"]  # the machine annotation, by node id
NORMS_READ_ONLY = ("show", "history", "export")  # actions that open the store only to read


def cmd_norms(args: argparse.Namespace) -> int:
    """Read or change the editors' store; versions count from the knowledge base's machine
    annotation (version 0). Reading opens the store read-only: nothing is created, and a
    store on a read-only file system can still be shown and exported."""
    from privacy_checklist.kg.store import StoreError

    kb = load_kb(args)
    baseline = kb.machine_norms
    try:
        with open_store(args, readonly=args.action in NORMS_READ_ONLY) as store:
            return ACTIONS[args.action](args, kb, baseline, store)
    except StoreError as exc:
        raise CliError(str(exc)) from exc


def _norm_view(record: Record) -> dict[str, Any]:
    norm = record.norm.to_json()
    norm["annotation_version"] = norm.pop("version")
    return {
        **norm,
        "status": record.status,
        "version": record.version,
        "updated_at": record.updated_at,
        "updated_by": record.updated_by,
        "comment": record.comment,
    }


def condition_lines(conditions: list[dict[str, Any]], node: str) -> list[str]:
    """One line a condition: mode, group, kind, the quoted words (and where, if another
    paragraph's)."""
    lines = []
    for c in conditions:
        mode = c["mode"] + (f" {c['group']}" if c.get("group") else "")
        where = f" ({c['node']})" if c.get("node") and c["node"] != node else ""
        lines.append(printable(f"  {mode:<14} {c['kind']:<32} “{c['quote']}”{where}"))
    return lines


def _show(args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore) -> int:
    view = _norm_view(store.current(args.id, baseline))
    if args.json:
        print_json(view)
        return 0
    for key, value in view.items():
        if key == "conditions":
            print(f"{key:<22} {len(value) or 'none'}")
            for line in condition_lines(value, args.id):
                print(line)
        else:
            print(f"{key:<22} {printable(value)}")
    return 0


def _history(
    args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore
) -> int:
    store.current(args.id, baseline)  # refuses an id that is not an annotated paragraph
    rows = store.history(args.id)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print(f"{args.id}: no changes (the knowledge base's machine annotation, version 0)")
    for row in rows:
        print(
            printable(
                f"v{row['version']} {row['at']} {row['by']}: {row['action']} -> {row['status']}"
                + (f" [{row['changed']}]" if row["changed"] else "")
                + (f" “{row['comment']}”" if row["comment"] else "")
            )
        )
    return 0


def _edit(args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore) -> int:
    changes: dict[str, Any] = {}
    for item in args.set or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--set {item!r}: write FIELD=VALUE")
        changes[key.strip()] = value.strip()
    if not changes:
        raise CliError("nothing to change: pass --set FIELD=VALUE (lists as 'a; b')")
    record = store.edit(
        args.id, changes, args.editor, args.version, baseline, args.comment, tree=kb.tree
    )
    print(f"{args.id}: saved as version {record.version} (validated by {record.updated_by})")
    return 0


def _set_status(
    args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore
) -> int:
    status = "validated" if args.action == "validate" else "rejected"
    record = store.set_status(args.id, status, args.editor, args.version, baseline, args.comment)
    print(f"{args.id}: {status} at version {record.version} by {record.updated_by}")
    return 0


def _export(
    args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore
) -> int:
    data = store.export(baseline, kb.tree)
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CliError(f"{out}: cannot write there ({reason}); choose another --out") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    print(f"Wrote {len(data)} norms to {out}")
    return 0


def _import(
    args: argparse.Namespace, kb: KnowledgeBase, baseline: Baseline, store: NormStore
) -> int:
    result = store.import_file(Path(args.file), args.editor, baseline, kb.tree)
    print(
        f"Imported {len(result.imported)} norms from {args.file}"
        + (f"; {len(result.unchanged)} unchanged, skipped" if result.unchanged else "")
    )
    return 0


Action = Callable[[argparse.Namespace, "KnowledgeBase", "Baseline", "NormStore"], int]
ACTIONS: dict[str, Action] = {
    "show": _show,
    "history": _history,
    "edit": _edit,
    "validate": _set_status,
    "reject": _set_status,
    "export": _export,
    "import": _import,
}


def register(sub: Any) -> None:
    group = sub.add_parser(
        "norms",
        help="the editors' store: show, edit, validate, reject, history, export, import",
        description="Editors review norms here. Every change names the version it was made against "
        "(--version N, from 'show'); a stale one is refused with who changed what since.",
    )
    store_option(group, EDITORS_STORE_HELP)
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("show", "a norm as it stands"), ("history", "every change of a norm")):
        p = actions.add_parser(name, help=text, description=f"Print {text}.")
        p.add_argument("id", help="paragraph id")
        json_option(p)
    for name, text in (
        ("edit", "change fields (the result is validated)"),
        ("validate", "accept a norm as it stands"),
        ("reject", "reject a norm"),
    ):
        p = actions.add_parser(name, help=text, description=f"{text.capitalize()}.")
        p.add_argument("id", help="paragraph id")
        p.add_argument("--editor", required=True, metavar="NAME", help="who you are")
        p.add_argument(
            "--version",
            type=int,
            required=True,
            metavar="N",
            help="the version you looked at (pcheck norms show ID)",
        )
        p.add_argument("--comment", default="", help="why")
        if name == "edit":
            p.add_argument(
                "--set",
                action="append",
                metavar="FIELD=VALUE",
                help="e.g. --set norm_type=prohibit --set 'recipient=family member; friend' "
                '--set \'conditions=[{"kind": "court_order", "mode": "required", '
                '"quote": "WORDS OF THE PARAGRAPH"}]\' (a JSON list of {kind, mode, '
                "quote[, group][, node]}; kinds of condition_kinds.json, quotes checked against "
                "the paragraph's text)",
            )
    p = actions.add_parser(
        "export",
        help="all norms in the paper's JSON format plus provenance",
        description="Write every norm in the paper's format plus our fields.",
    )
    p.add_argument("--out", required=True, metavar="FILE")
    p = actions.add_parser(
        "import",
        help="import a file written by export (all or nothing)",
        description="Check the whole file first; import it in one transaction.",
    )
    p.add_argument("file")
    p.add_argument("--editor", required=True, metavar="NAME")
    group.set_defaults(func=cmd_norms)
