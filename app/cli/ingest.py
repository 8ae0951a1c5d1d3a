"""``pcheck ingest``: build a knowledge base from eCFR part pages and save it in one atomic step."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError
from privacy_checklist.ingest.ecfr import LIVE_URLS, load_page
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.kg.conditions import CATALOGUE_FILE, CatalogueError
from privacy_checklist.kg.roles import RoleGraphError

DEFAULT_OUT = "privacy-checklist-kb"
SHOWN_UNRESOLVED = 20  # unresolved citations printed; the rest are in references.json


def _shared_data_dirs(name: str) -> list[Path]:
    """``../shared/data/NAME`` seen from the working folder, then from the checkout."""
    return [
        base.parent / "shared" / "data" / name
        for base in (Path.cwd(), Path(__file__).resolve().parents[2])
    ]


def _default_ontologies() -> Path | None:
    return next((folder for folder in _shared_data_dirs("ontologies") if folder.is_dir()), None)


def _default_sources() -> list[str]:
    """The saved pages in ../shared/data/hipaa when there, else the live eCFR pages."""
    for folder in _shared_data_dirs("hipaa"):
        pages = sorted(folder.glob("ecfr-title45-part*.html"))
        if pages:
            return [str(p) for p in pages]
    return list(LIVE_URLS.values())


def _output_error(out: Path, exc: Exception) -> str:
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


def _read_pages(sources: list[str], timeout: float) -> list[Any]:
    from tqdm import tqdm

    pages = []
    bar = tqdm(sources, desc="reading eCFR pages", unit="page", file=sys.stderr, disable=None)
    for source in bar:
        bar.set_postfix_str(Path(source).name if "://" not in source else source.rsplit("/", 1)[-1])
        pages.append(load_page(source, timeout=timeout))
    return pages


def _ontologies(args: argparse.Namespace) -> Path | None:
    """The ontology folder the graphs are built from, or None to build without them."""
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
    return ontologies


def _ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from privacy_checklist.kg import atomic

    out = Path(args.out or args.kb or DEFAULT_OUT)
    try:  # refuse at once, not after the build
        atomic.check_dir_target(out, kbmod.not_a_knowledge_base, force=args.force)
    except (atomic.OutputRefused, OSError) as exc:
        raise CliError(_output_error(out, exc)) from exc
    pages = _read_pages(kbmod.iter_sources(args.source or _default_sources()), args.timeout)
    steps = tqdm(total=7, desc="building", unit="step", file=sys.stderr, disable=None)

    def progress(message: str) -> None:
        steps.set_postfix_str(message)
        steps.update(1)

    ontologies = _ontologies(args)
    steps.total = 7 if ontologies is not None else 4
    try:
        built = kbmod.build(pages, progress=progress, ontologies=ontologies)
    except CatalogueError as exc:
        steps.close()
        raise CliError(
            f"the curated norm readings do not fit the regulation text ({exc}); fix "
            f"ontologies/{CATALOGUE_FILE}; nothing was written"
        ) from exc
    except (ValueError, RoleGraphError) as exc:
        steps.close()
        raise CliError(str(exc)) from exc
    progress("saving")
    try:
        built.save(out, force=args.force)
    except atomic.InterruptedAfterCommit:
        steps.close()
        print(f"pcheck ingest: interrupted; {out} holds the new knowledge base", file=sys.stderr)
        return 130
    except (atomic.OutputRefused, OSError) as exc:
        raise CliError(_output_error(out, exc)) from exc
    except ValueError as exc:  # a file format that cannot hold what was built
        steps.close()
        raise CliError(f"{out}: cannot be written ({exc}); nothing was written") from exc
    steps.close()
    _report(built, out)
    if not args.kb and Path(out).resolve() != kbmod.builtin_path().resolve():
        print(f"Use it with: pcheck --kb {out} ...   (or export PCHECK_KB={out})")
    return 0


def _report(built: kbmod.KnowledgeBase, out: Path) -> None:
    """The built knowledge base's counts; its unresolved citations on stderr."""
    stats = built.stats()
    refs = stats["references"]
    print(
        f"Built {out}: {stats['nodes']} nodes ({stats['internal_nodes']} internal, "
        f"{stats['leaves']} leaves), {refs['internal']} internal and {refs['external']} external "
        f"references, {refs['unresolved']} unresolved, {stats['definitions']['total']} definitions."
    )
    for item in built.unresolved[:SHOWN_UNRESOLVED]:
        print(
            f"unresolved citation in {item.source} [{item.start}:{item.end}] “{item.text}”: "
            f"{item.reason}",
            file=sys.stderr,
        )
    if len(built.unresolved) > SHOWN_UNRESOLVED:
        more = len(built.unresolved) - SHOWN_UNRESOLVED
        print(f"... {more} more in {out}/references.json", file=sys.stderr)


def register(sub: Any) -> None:
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
