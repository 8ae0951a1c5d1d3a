"""Choosing the rules annotator's switches, measured leave-one-section-out.

Where the grammar of a paragraph leaves its type to convention, the rules annotator
(:class:`~privacy_checklist.kg.norms.RulesAnnotator`) reads it by switches
(:class:`~privacy_checklist.kg.deontic.Switches`, ``ontologies/norm_structure.json``).
:func:`choose_switches` picks them on the sections of the paper's expert annotations given;
:func:`switches_leave_one_section_out` picks them on the other sections for each one, so each
section is typed by switches that never saw its labels. ``pcheck annotate-eval --gold FILE
--loso`` prints it beside the rules annotator in-sample. (A learned model of a norm's type from
its paragraph's structure was measured the same way and not shipped:
``bench/experiments/structure_model.py``.)
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from privacy_checklist.kg.metrics import per_class

if TYPE_CHECKING:
    from privacy_checklist.kg.deontic import Switches
    from privacy_checklist.kg.tree import RegulationTree

TYPES = ("permit", "prohibit", "definition")


def _figures(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    confusion: dict[str, Counter[str]] = {t: Counter() for t in TYPES}
    for g, p in zip(gold, predicted, strict=True):
        confusion[g][p] += 1
    figures = per_class(confusion, TYPES)
    return {
        "n": figures["n"],
        "accuracy": figures["accuracy"],
        "macro_f1": figures["macro_f1"],
        "prohibit_recall": (
            round(confusion["prohibit"]["prohibit"] / sum(confusion["prohibit"].values()), 4)
            if sum(confusion["prohibit"].values())
            else None
        ),
        "confusion": {t: {p: confusion[t][p] for p in TYPES} for t in TYPES},
    }


def section_of(node_id: str) -> str:
    return node_id.split("(", 1)[0]


def figures_of(gold: Mapping[str, str], predicted: Mapping[str, str]) -> dict[str, Any]:
    """The same figures for any reading (the rules annotator's), pooled and per section."""
    ids = [i for i in gold if i in predicted]
    sections = sorted({section_of(i) for i in ids})
    return {
        "pooled": _figures([gold[i] for i in ids], [predicted[i] for i in ids]),
        "sections": {
            s: _figures(
                [gold[i] for i in ids if section_of(i) == s],
                [predicted[i] for i in ids if section_of(i) == s],
            )
            for s in sections
        },
    }


def gold_types(
    entries: Mapping[str, Mapping[str, Any]], paper_types: Mapping[str, str]
) -> dict[str, str]:
    """Paragraph id -> type from a file in the paper's format."""
    return {k: paper_types[v["norm_type"]] for k, v in entries.items() if v.get("norm_type")}


def _switch_grid() -> list[Switches]:
    from privacy_checklist.kg.deontic import Switches

    names = Switches.names()
    return [
        Switches(**dict(zip(names, values, strict=True)))
        for values in itertools.product((True, False), repeat=len(names))
    ]


def _switch_readings(tree: RegulationTree, ids: Sequence[str]) -> dict[Switches, dict[str, str]]:
    """Every paragraph's type under every combination of the switches."""
    from privacy_checklist.kg.norms import RulesAnnotator

    out = {}
    readings: dict[str, Any] = {}
    for switches in _switch_grid():
        annotator = RulesAnnotator(tree, switches=switches)
        annotator._readings = readings  # the sentences read once, whatever the switches
        out[switches] = {i: annotator.norm_type(i) for i in ids}
    return out


def _choose(
    by_switches: Mapping[Switches, Mapping[str, str]], gold: Mapping[str, str], ids: Sequence[str]
) -> Switches:
    """The switches with the best macro-F1 on ``ids`` (then accuracy); a tie goes to the one
    that keeps more of the grammar's reading (the class's defaults)."""
    from privacy_checklist.kg.deontic import Switches

    default = Switches()
    names = Switches.names()

    def score(switches: Switches) -> tuple[float, float, int]:
        f = _figures([gold[i] for i in ids], [by_switches[switches][i] for i in ids])
        kept = sum(getattr(switches, n) == getattr(default, n) for n in names)
        return (f["macro_f1"], f["accuracy"], kept)

    return max(by_switches, key=score)


def choose_switches(tree: RegulationTree, gold: Mapping[str, str]) -> Switches:
    """The switches chosen on every paragraph of ``gold`` (what ``norm_structure.json`` ships)."""
    ids = [i for i in gold if i in tree.nodes]
    return _choose(_switch_readings(tree, ids), gold, ids)


def switches_leave_one_section_out(tree: RegulationTree, gold: Mapping[str, str]) -> dict[str, Any]:
    """The structural rules annotator, its switches chosen on the other sections for each
    section of ``gold``: the figures pooled and per section, and the switches each chose."""
    ids = [i for i in gold if i in tree.nodes]
    by_switches = _switch_readings(tree, ids)
    predicted: dict[str, str] = {}
    per_section = {}
    chosen = {}
    for section in sorted({section_of(i) for i in ids}):
        train = [i for i in ids if section_of(i) != section]
        test = [i for i in ids if section_of(i) == section]
        switches = _choose(by_switches, gold, train)
        chosen[section] = {n: getattr(switches, n) for n in type(switches).names()}
        for i in test:
            predicted[i] = by_switches[switches][i]
        per_section[section] = _figures([gold[i] for i in test], [predicted[i] for i in test])
    return {
        "pooled": _figures([gold[i] for i in ids], [predicted[i] for i in ids]),
        "sections": per_section,
        "switches": chosen,
        "predicted": predicted,
    }
