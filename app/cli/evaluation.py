"""Measuring and training the reasoning methods: ``pcheck eval`` (verdicts on a case file,
resumable) and ``pcheck reasoner train`` (the offline reasoner's model)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privacy_checklist.app.cli.common import CliError, load_kb, print_json, read_cases
from privacy_checklist.app.cli.options import cases_option, json_option, limit_option
from privacy_checklist.app.cli.reasoning import (
    METHODS_TEXT,
    build_reasoner,
    llm_client,
    method_options,
    reasoning_index,
    selected_methods,
)
from privacy_checklist.kg import kb as kbmod
from privacy_checklist.reasoning.methods import OFFLINE_METHODS

if TYPE_CHECKING:
    from privacy_checklist.ingest.cases import Case
    from privacy_checklist.reasoning.evaluation.harness import RunStats
    from privacy_checklist.reasoning.verdict import Reasoner


def cmd_eval_verdicts(args: argparse.Namespace) -> int:
    """``pcheck eval``: decide every case with each method, log and score the verdicts."""
    from privacy_checklist.reasoning.evaluation.harness import (
        FolderBusy,
        RunStats,
        locked,
        markdown_details,
        markdown_table,
    )

    methods = selected_methods(args.method)
    kb = load_kb(args)
    cases = read_cases(args.cases, command=args.command, limit=args.limit)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"{out}: is a file, not a folder; pass --out a folder")
    client = llm_client(args) if any(m not in OFFLINE_METHODS for m in methods) else None
    reasoners = {
        m: build_reasoner(
            m, kb, reasoning_index(kb, args.index), client, args.k, restate=args.restate
        )
        for m in methods
    }
    results: dict[str, dict[str, Any]] = {}
    stats: dict[str, RunStats] = {}
    undecided: list[str] = []
    report = ""
    try:
        with locked(out):
            for method, reasoner in reasoners.items():
                stats[method] = RunStats()
                results[method], note = _evaluate_method(args, cases, method, reasoner, stats)
                undecided += [note] if note else []
            details = markdown_details(results)
            report = markdown_table(results) + (f"\n{details}" if details else "")
            (out / "table.md").write_text(report, encoding="utf-8")
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
        print_json(results if len(results) > 1 else next(iter(results.values())))
    else:
        print(report, end="")
        print(f"Logs, metrics and confusion matrices in {out}")
    if undecided:
        raise CliError(
            "; ".join(undecided) + "; they are not scored: rerun the same command to ask them again"
        )
    return 0


def _evaluate_method(
    args: argparse.Namespace,
    cases: list[Case],
    method: str,
    reasoner: Reasoner,
    stats: dict[str, RunStats],
) -> tuple[dict[str, Any], str | None]:
    """Decide the cases with one method (logged cases reused), write its metrics and confusion
    matrix; returns the metrics and a note on the cases left undecided, if any."""
    from tqdm import tqdm

    from privacy_checklist.reasoning.evaluation.digests import decision_settings
    from privacy_checklist.reasoning.evaluation.harness import (
        OtherCaseFile,
        case_file_record,
        claim_run,
        confusion_png,
        gold_references,
        metrics,
        run,
    )
    from privacy_checklist.reasoning.verdict import Verdict

    out = Path(args.out)
    case_file = case_file_record(Path(args.cases), cases)
    try:
        claim_run(out, method, case_file)
    except OtherCaseFile as exc:
        raise CliError(str(exc)) from exc
    bar = tqdm(total=len(cases), desc=method, unit="case", file=sys.stderr, disable=None)
    local = method in OFFLINE_METHODS or args.llm_backend == "local"
    try:
        records = run(
            cases,
            method,
            partial(_decide, reasoner),
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
    result = metrics(records, gold_references(cases))
    (out / f"{method}.metrics.json").write_text(
        json.dumps(result | {"cases": case_file}, indent=2) + "\n", encoding="utf-8"
    )
    result["cases"] = {k: v for k, v in case_file.items() if k != "ids"} | {"n": len(cases)}
    confusion_png(result, f"{method} on {Path(args.cases).name}", out / f"{method}.confusion.png")
    if not result["request_failures"]:
        return result, None
    failures = (Verdict.from_json(r).failure for r in records)
    first = next((failure for failure in failures if failure), "no answer")
    return result, (
        f"{result['request_failures']} of {len(records)} cases undecided by {method} ({first})"
    )


def _decide(reasoner: Reasoner, text: str) -> dict[str, Any]:
    """A verdict on ``text`` as the evaluation logs it."""
    return reasoner.check(text).to_json()


def cmd_reasoner_train(args: argparse.Namespace) -> int:

    from privacy_checklist.ingest.cases import read_cases as read_case_list
    from privacy_checklist.reasoning.learned.offline import MODEL_FILES, train
    from privacy_checklist.reasoning.text import data_path
    from privacy_checklist.retrieval.index import RetrievalIndex

    # the shipped machine norms, never a user's store: the model that ships must not depend
    # on what one machine's editors have changed
    kb = kbmod.load(args.kb or os.environ.get("PCHECK_KB") or None)
    if args.method == "conditions":
        return _train_conditions(args, kb)
    cases_dir = Path(args.cases_dir)
    try:
        train_cases = read_case_list(cases_dir / "train_generate_cases_hipaa_applicability.csv")
        val_cases = read_case_list(cases_dir / "val_generate_cases_hipaa_applicability.csv")
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.method == "checklist":
        return _train_blend(args, kb, [*train_cases, *val_cases], cases_dir)
    out = Path(args.out) if args.out else data_path(MODEL_FILES[args.fast])
    bar = _progress(len(train_cases) + len(val_cases))
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


def _train_conditions(args: argparse.Namespace, kb: kbmod.KnowledgeBase) -> int:
    """``pcheck reasoner train --method conditions``: the learned condition reader, fitted on
    the corpus's labelled sentences and written as the shipped one (or to --out's folder)."""
    import hashlib

    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of
    from privacy_checklist.reasoning.learned import condition_fit
    from privacy_checklist.reasoning.learned.conditions import GRAPH_NAME, HEAD_NAME
    from privacy_checklist.reasoning.text import data_path

    paths = [p for p in _writer_files(args.writers) if p.suffix == ".jsonl"]
    corpus = read_corpus(paths)
    for name, skipped in corpus.skipped:
        print(f"{name}: line {skipped.line} skipped: {skipped.reason}", file=sys.stderr)
    where = Path(args.out) if args.out else data_path(HEAD_NAME).parent
    bar = _progress(0)

    def tick(step: int, steps: int, loss: float) -> None:
        bar.total = steps
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}")

    made = condition_fit.train(
        corpus.narratives,
        sorted(catalogue_of(kb).kinds),
        where / GRAPH_NAME,
        where / HEAD_NAME,
        sources={p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths},
        progress=tick,
    )
    bar.close()
    print(
        f"fitted on {len(corpus.narratives)} narratives by {len(corpus.writers)} writers; wrote "
        f"{made['graph']} ({made['bytes'] / 1e6:.1f} MB; the 8-bit reader's likeliest value "
        f"is the fitted one's on {made['same']:.1%} of the pairs checked, probabilities "
        f"within {made['gap']}) "
        f"and {where / HEAD_NAME}"
    )
    return 0


def _progress(total: int) -> Any:
    """The progress bar of a training run (on stderr, off when it is not a terminal)."""
    from tqdm import tqdm

    return tqdm(
        total=total, desc="reading the synthetic cases", unit="case", file=sys.stderr, disable=None
    )


#: the writers' sets the checklist's learned layer is fitted on when none are given (paths from
#: the repository's root): the labelled corpus and the project's own narrative sets
LAYER_WRITERS = (
    "bench/data/corpus/*.jsonl",
    "tests/data/checklist_regression.csv",
    "tests/data/checklist_styles.csv",
    "tests/data/checklist_dev_[abc].csv",
    "bench/data/heldout_narratives.csv",
)


def _writer_files(given: list[str] | None) -> list[Path]:
    """The writers' sets to fit the layer on: those given, else :data:`LAYER_WRITERS`."""
    if given:
        return [Path(name) for name in given]
    found = [path for pattern in LAYER_WRITERS for path in sorted(Path().glob(pattern))]
    if not any(path.suffix == ".jsonl" for path in found):
        raise CliError(
            "bench/data/corpus: no writers' sets here; run from the repository's root or give "
            "--writers FILE ..."
        )
    return found


def _train_blend(
    args: argparse.Namespace, kb: kbmod.KnowledgeBase, synthetic: list[Any], cases_dir: Path
) -> int:
    """``pcheck reasoner train --method checklist``: the checklist's learned layer, on the
    writers' sets and the synthetic cases, chosen by folds that leave whole writers out."""
    import hashlib

    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner
    from privacy_checklist.reasoning.learned.blend import MODEL_FILES, train
    from privacy_checklist.reasoning.text import data_path

    reasoner = ChecklistReasoner(kb, blend=False, conditions=_conditions(args, kb))
    embed = not args.fast
    out = Path(args.out) if args.out else data_path(MODEL_FILES[embed])
    names = (
        "train_generate_cases_hipaa_applicability.csv",
        "val_generate_cases_hipaa_applicability.csv",
    )
    sources = {name: hashlib.sha256((cases_dir / name).read_bytes()).hexdigest() for name in names}
    if args.conditions:
        sources["conditions read out of fold"] = args.conditions
    # the synthetic cases are one court-style writer: grouped by the regulation each was
    # written for, and weighed so that they count as much as all the other writers together
    cases = list(synthetic)
    writers = [f"synthetic:{c.regulations[0] if c.regulations else ''}" for c in synthetic]
    for path in _writer_files(args.writers):
        found = read_cases(str(path), command="reasoner train", limit=None)
        cases += found
        writers += [path.stem] * len(found)
        sources[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    if len(set(writers)) < 3:
        raise CliError(f"{len(set(writers))} writer(s): the layer needs at least 3 to be chosen")
    others = len(cases) - len(synthetic)
    weights = [others / len(synthetic) if others else 1.0] * len(synthetic) + [1.0] * others
    bar = _progress(len(cases))
    model = train(
        kb,
        reasoner.checklists,
        cases,
        out,
        # the checklist the layer weighs at check time (the shipped condition reader), even
        # when its training features read the conditions out of fold
        settings=ChecklistReasoner(kb, blend=False).settings()["checklist"],
        sources=sources,
        cache=Path(args.cache) if args.cache else None,
        progress=bar.update,
        embed=embed,
        writers=writers,
        weights=weights,
    )
    bar.close()
    _report_layer(model, out)
    return 0


def _conditions(args: argparse.Namespace, kb: kbmod.KnowledgeBase) -> Any:
    """How the layer's checklist reads the conditions while it is fitted: the shipped reader,
    or (--conditions DIR:TAG:FOLDS) each corpus narrative read by a reader fitted without its
    writer, so that the layer learns how far to trust facts read from an unseen writer."""
    if not args.conditions:
        return True
    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.reasoning.checklist.reasoner import catalogue_of
    from privacy_checklist.reasoning.learned.condition_fit import out_of_fold

    paths = [p for p in _writer_files(args.writers) if p.suffix == ".jsonl"]
    try:
        cache, tag, folds = args.conditions.rsplit(":", 2)
        return out_of_fold(
            Path(cache),
            tag,
            int(folds),
            read_corpus(paths).narratives,
            sorted(catalogue_of(kb).kinds),
        )
    except (ValueError, OSError) as exc:
        raise CliError(f"--conditions {args.conditions}: {exc}") from exc


def _report_layer(model: dict[str, Any], out: Path) -> None:
    """What training the layer printed: its cross-validated figures and what it chose."""
    cv = model["cross_validation"]
    for name in ("blend", "checklist_alone", "offline_features_alone"):
        row = cv[name]
        print(
            f"{name:24s} accuracy {row['accuracy']:.3f}  macro-F1 {row['macro_f1']:.3f}  "
            f"prohibit F1 {row['f1']['prohibit']:.3f}"
        )
    for part in ("synthetic", "writers"):
        if part in cv:
            print(
                f"  {part}: blend {cv[part]['blend']['accuracy']:.3f}, checklist alone "
                f"{cv[part]['checklist_alone']['accuracy']:.3f} ({cv[part]['cases']} cases)"
            )
    print(
        f"({cv['folds']}-fold cross-validation leaving whole writers out (the synthetic cases: "
        f"whole regulations), on {model['cases']} narratives by {model['writers']} writers; "
        f"chosen {model['params']}); wrote {out}"
    )


def register(sub: Any) -> None:
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
        "writes into OUT. " + METHODS_TEXT,
    )
    cases_option(p)
    method_options(p, several=True)
    p.add_argument("--out", required=True, metavar="DIR")
    limit_option(p)
    p.add_argument(
        "--parallel",
        type=int,
        default=4,
        metavar="N",
        help="cases decided at once by LLM methods over an endpoint (default 4; the offline "
        "reasoner and the local backend take one at a time)",
    )
    json_option(p, "print the metrics as JSON")
    p.set_defaults(func=cmd_eval_verdicts)

    _register_train(sub)


def _register_train(sub: Any) -> None:
    """``pcheck reasoner train``."""
    group = sub.add_parser(
        "reasoner",
        help="the learned models: the offline reasoner's and the checklist's layer",
        description="Train the offline reasoner's model or the checklist's learned layer.",
    )
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser(
        "train",
        help="refit the offline reasoner's model or the checklist's learned layer",
        description="Fit the offline reasoner on the synthetic train and val cases and choose "
        "its regularisation by 5-fold cross-validation on them; or (--method checklist) fit the "
        "checklist's learned layer on the writers' sets and the synthetic cases, choosing it by "
        "5-fold cross-validation whose folds leave whole writers out. Never on real court "
        "cases. Writes the model JSON whole or not at all.",
    )
    p.add_argument("--cases-dir", default="../shared/data/cases", metavar="DIR")
    p.add_argument(
        "--fast",
        action="store_true",
        help="without the sentence embedding: the offline-fast model, or with --method "
        "checklist the layer's variant without it (shipped beside the default)",
    )
    p.add_argument(
        "--method",
        choices=("offline", "checklist", "conditions"),
        default="offline",
        help="offline: the linear model of the offline reasoners (default); checklist: the "
        "checklist's learned layer (the checklist's outcome and the offline features, with the "
        "sentence embedding unless --fast), fitted on the writers' sets and the synthetic "
        "cases; conditions: the learned condition reader (all-MiniLM-L6-v2 fine-tuned on the "
        "corpus's labelled sentences; the embeddings and train extras, about 10 minutes)",
    )
    p.add_argument(
        "--writers",
        nargs="+",
        metavar="FILE",
        help="--method checklist: the writers' sets (corpus .jsonl or case .csv; each file one "
        "writer) to fit on besides the synthetic cases; default: bench/data/corpus/*.jsonl and "
        "the project's narrative sets (run from the repository's root)",
    )
    p.add_argument(
        "--cache",
        metavar="FILE",
        help="--method checklist: keep each case's features here and reuse them while the "
        "checklist's settings are the same",
    )
    p.add_argument(
        "--conditions",
        metavar="DIR:TAG:FOLDS",
        help="--method checklist: read each corpus narrative's conditions with the learned "
        "reader fitted without its writer (the fold files of "
        "bench/experiments/condition_reader.py; make train-layer passes them); default: the "
        "shipped reader",
    )
    p.add_argument("--out", metavar="FILE", help="default: the model that ships with the package")
    p.set_defaults(func=cmd_reasoner_train, on_interrupt="nothing was changed")
