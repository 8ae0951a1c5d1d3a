"""Benchmark and measurement of the role and attribute graphs.

Prints, for the built-in knowledge base:

1. build time of each graph (fresh process each run; WordNet's own load included) and load
   time of the saved graphs, with peak memory;
2. resolve latency per phrase (p50 / p95) once loaded, without the embedding fallback and
   with it (its model load reported apart);
3. top-1 accuracy on the labeled lists in tests/data (the tuning lists and the held-out ones);
4. the gold "Sender Role", "Recipient Role", "About Role" and "Type" fields of the synthetic
   cases: how many reach a regulatory role / a HIPAA information type, and the most frequent
   values that reach none.

Targets on the project's 2-core machine: build at most 30 s, load well under 1 s, resolve
under 20 ms a phrase, roles accuracy at least 0.90, attributes at least 0.85.

    python bench/graphs.py [--runs 3] [--shared ../shared/data] [--json FILE]
"""

from __future__ import annotations

import ast
import csv
import json
import resource
import time
from collections import Counter
from pathlib import Path

from common import REPO, measure, percentile, run_main

LISTS = {
    "roles": ["role_phrases.tsv", "heldout_role_phrases.tsv"],
    "attributes": ["attribute_phrases.tsv", "heldout_attribute_phrases.tsv"],
}
CASE_FILES = (
    "train_generate_cases_hipaa_applicability.csv",
    "val_generate_cases_hipaa_applicability.csv",
)
NOT_GIVEN = {"", "none", "n/a", "na", "not specified", "unknown", "not applicable", "null", "nan"}


def child(task: str, shared: Path) -> None:
    from privacy_checklist.kg import kb as kbmod

    kb = kbmod.load()
    start = time.perf_counter()
    if task == "build-roles":
        from privacy_checklist.kg.roles import build_role_graph

        build_role_graph(kb.tree, kb.definitions)
    elif task == "build-attributes":
        from privacy_checklist.kg.attributes import build_attribute_graph

        build_attribute_graph(kb.tree, shared / "ontologies")
    else:  # load
        _ = kb.roles, kb.attributes, kb.nouns
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))


def latency(resolver, phrases: list[str]) -> dict[str, float]:
    times = []
    for phrase in phrases:
        start = time.perf_counter()
        resolver.resolve(phrase)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95), "n": len(times)}


def gold_fields(kb, shared: Path) -> dict:
    from privacy_checklist.kg.attributes import information_type

    roles, attributes = kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
    counts: dict[str, Counter] = {}
    unmatched: dict[str, Counter] = {}
    mapped: dict[str, Counter] = {}
    for name in CASE_FILES:
        with (shared / "cases" / name).open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                try:
                    fields = ast.literal_eval(row["generate_characteristics"])
                except (ValueError, SyntaxError):
                    continue
                if not isinstance(fields, dict):
                    continue
                for key in ("Sender Role", "Recipient Role", "About Role", "Type"):
                    value = str(fields.get(key) or "").strip()
                    c = counts.setdefault(key, Counter())
                    if value.lower().strip(" .;") in NOT_GIVEN:
                        c["not given"] += 1
                        continue
                    if key == "Type":
                        matches = attributes.resolve(value, 1)
                        got = information_type(matches[0] if matches else None)
                        hit = got != "none" and got != "de-identified information"
                    else:
                        matches = roles.resolve(value, 1)
                        got = matches[0].target if matches else "none"
                        hit = bool(matches)
                    c["reached" if hit else "none"] += 1
                    if not hit:
                        unmatched.setdefault(key, Counter())[value.lower()] += 1
                    else:
                        mapped.setdefault(key, Counter())[f"{value.lower()} -> {got}"] += 1
    return {
        key: {
            "given": c["reached"] + c["none"],
            "reached": c["reached"],
            "share": round(c["reached"] / max(1, c["reached"] + c["none"]), 3),
            "not_given": c["not given"],
            "top_unmatched": unmatched.get(key, Counter()).most_common(15),
            "top_mapped": mapped.get(key, Counter()).most_common(15),
        }
        for key, c in counts.items()
    }


def main() -> int:
    args = run_main(__doc__, 3, "ontologies", child)
    if args is None:
        return 0
    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.kg.attributes import information_type
    from privacy_checklist.kg.labels import evaluate, read_labels

    results: dict = {"timing": {}, "latency": {}, "accuracy": {}}
    for task in ("build-roles", "build-attributes", "load"):
        results["timing"][task] = measure(__file__, task, args.runs, "--shared", str(args.shared))
    kb = kbmod.load()
    label_of = {"roles": lambda m: m.target if m else "none", "attributes": information_type}
    for graph, files in LISTS.items():
        phrases = [r.phrase for f in files for r in read_labels(REPO / "tests" / "data" / f)]
        plain = (
            kb.role_resolver(embeddings=False)
            if graph == "roles"
            else kb.attribute_resolver(embeddings=False)
        )
        results["latency"][graph] = latency(plain, phrases)
        start = time.perf_counter()
        from privacy_checklist.kg.embeddings import model

        model()
        with_model = (
            kb.role_resolver(embeddings=True)
            if graph == "roles"
            else kb.attribute_resolver(embeddings=True)
        )
        with_model.resolve("zyxqvw")  # and embeds the concept names
        model_s = time.perf_counter() - start
        results["latency"][f"{graph} + embeddings"] = {
            **latency(with_model, phrases),
            "model_load_s": round(model_s, 2),
        }
        for name in files:
            for embeddings in (False, True):
                resolver = with_model if embeddings else plain
                scored = evaluate(
                    resolver, read_labels(REPO / "tests" / "data" / name), label_of[graph]
                )
                results["accuracy"][f"{name}{' + embeddings' if embeddings else ''}"] = {
                    k: scored[k] for k in ("n", "correct", "accuracy")
                }
    results["cases"] = gold_fields(kb, args.shared)
    results["graphs"] = {"roles": kb.roles.stats(), "attributes": kb.attributes.stats()}

    print(f"{'timing':<22} {'median s':>9} {'min s':>7} {'max s':>7} {'peak MB':>8}")
    for name, r in results["timing"].items():
        print(
            f"{name:<22} {r['median_s']:>9.3f} {r['min_s']:>7.3f} {r['max_s']:>7.3f} "
            f"{r['peak_mb']:>8.0f}"
        )
    print(f"\n{'resolve latency':<28} {'p50 ms':>7} {'p95 ms':>7} {'phrases':>8}")
    for name, r in results["latency"].items():
        extra = f"  (model load {r['model_load_s']} s)" if "model_load_s" in r else ""
        print(f"{name:<28} {r['p50_ms']:>7.2f} {r['p95_ms']:>7.2f} {r['n']:>8}{extra}")
    print(f"\n{'top-1 accuracy':<52} {'acc':>6} {'right':>6} {'n':>5}")
    for name, r in results["accuracy"].items():
        print(f"{name:<52} {r['accuracy']:>6.3f} {r['correct']:>6} {r['n']:>5}")
    print(
        f"\ngraphs: roles {results['graphs']['roles']}, "
        f"attributes {results['graphs']['attributes']}"
    )
    print("\nsynthetic cases (train + val), gold fields reaching a regulatory role / HIPAA type:")
    for key, r in results["cases"].items():
        print(
            f"  {key:<15} {r['reached']:>4}/{r['given']:<4} = {r['share']:.3f}   "
            f"({r['not_given']} not given)"
        )
        print(
            "      most frequent unmatched: "
            + "; ".join(f"{v} ({n})" for v, n in r["top_unmatched"][:10])
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
