"""Training the learned models: ``pcheck reasoner train`` (the offline reasoner's model, the
checklist's learned layer, the learned condition reader)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from privacy_checklist.app.cli.common import CliError, read_cases
from privacy_checklist.kg import kb as kbmod


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
    if args.method == "case-flow":
        return _train_case_flow(args)
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
    bar = _progress(0, "fitting the condition reader", "batch")
    started = time.monotonic()

    def tick(step: int, steps: int, loss: float) -> None:
        bar.total = steps
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}")
        if bar.disable and (step % max(1, steps // 20) == 0 or step == steps):
            # no bar off a terminal (a run under nohup): a line every twentieth of the run
            print(
                f"fitting the condition reader: batch {step}/{steps}, loss {loss:.3f}, "
                f"{time.monotonic() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    try:
        made = condition_fit.train(
            corpus.narratives,
            sorted(catalogue_of(kb).kinds),
            where / GRAPH_NAME,
            where / HEAD_NAME,
            sources={p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths},
            seed=args.seed,
            progress=tick,
        )
    except condition_fit.ProbeFailure as exc:
        raise CliError(
            f"the fitted condition reader fails its acceptance check, so it was not written "
            f"(the shipped one is unchanged; try another --seed): {exc}"
        ) from exc
    finally:
        bar.close()
    print(
        f"fitted on {len(corpus.narratives)} narratives by {len(corpus.writers)} writers; wrote "
        f"{made['graph']} ({made['bytes'] / 1e6:.1f} MB; the 8-bit reader's likeliest value "
        f"is the fitted one's on {made['same']:.1%} of the pairs checked, probabilities "
        f"within {made['gap']}) "
        f"and {where / HEAD_NAME}"
    )
    return 0


def _train_case_flow(args: argparse.Namespace) -> int:
    """``pcheck reasoner train --method case-flow``: the learned case-flow reader, fitted on
    the corpus's labelled deciding flows (the condition reader's sentence vectors, pooled)."""
    from privacy_checklist.reasoning.learned import case_flow_fit

    paths = [p for p in _writer_files(args.writers) if p.suffix == ".jsonl"]
    if not paths:
        raise CliError("--method case-flow: no corpus files (WRITER.jsonl) to fit on")
    made = case_flow_fit.train(paths, Path(args.out) if args.out else None)
    print(
        f"fitted on {made['narratives']} narratives by {len(made['writers'])} writers; wrote "
        f"{made['model']}"
    )
    return 0


def _progress(total: int, desc: str = "reading the synthetic cases", unit: str = "case") -> Any:
    """The progress bar of a training run (on stderr, off when it is not a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None)


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

    # the layer weighs the rule reader's flows (the checklist under it reads no case flow)
    reasoner = ChecklistReasoner(kb, blend=False, conditions=_conditions(args, kb), case_flow=False)
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
        settings=ChecklistReasoner(kb, blend=True).settings()["checklist"],
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
    from privacy_checklist.reasoning.learned.condition_folds import out_of_fold

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


#: what ``pcheck reasoner train --method`` fits
METHOD_HELP = (
    "offline: the linear model of the offline reasoners (default); checklist: the "
    "checklist's learned layer (the checklist's outcome and the offline features, with the "
    "sentence embedding unless --fast), fitted on the writers' sets and the synthetic "
    "cases; conditions: the learned condition reader (all-MiniLM-L6-v2 fine-tuned on the "
    "corpus's labelled sentences; the embeddings and train extras, about 15 minutes here; "
    "a reader that fails the acceptance check of reasoning/data/condition_probes.json is "
    "not written); "
    "case-flow: the learned case-flow reader (the deciding flow's roles and information "
    "type from the condition reader's sentence vectors; the train extra, a minute)"
)


def register_train(sub: Any) -> None:
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
        choices=("offline", "checklist", "conditions", "case-flow"),
        default="offline",
        help=METHOD_HELP,
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
        "bench/experiments/condition_reader.py; make train passes them); default: the "
        "shipped reader",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=13,
        help="--method conditions: the fitting's seed (default 13, the shipped reader's)",
    )
    p.add_argument("--out", metavar="FILE", help="default: the model that ships with the package")
    p.set_defaults(func=cmd_reasoner_train, on_interrupt="nothing was changed")
