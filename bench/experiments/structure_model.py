"""An experiment, measured and not shipped: a norm's type read by a learned model from the
structure of its paragraph, not from its first cue.

The rules annotator (:class:`~privacy_checklist.kg.norms.RulesAnnotator`) types a paragraph by
the earliest deontic cue in its own text, else its ancestor's. That misses prohibitions stated as
conditions on a permission ("may disclose ... only if", "must not ... unless") and reads the
items of a list of permitted purposes as definitions. This module describes each paragraph by
its structure — who the subject of its sentence is (a covered entity, a document, the
individual), its modal and whether a flow verb follows it, negation, restriction words ("only",
"unless", "except"), whether it is an item of a list its parent opens ("may disclose ... for the
following purposes:"), its heading's words — and a multinomial logistic regression over those
features, fitted on the paper's expert annotations, gives the type.

The figure that counts is leave-one-section-out (:func:`leave_one_section_out`): the model that
types a section's paragraphs never saw that section's labels. The same holds for the rules
annotator's switches (:class:`~privacy_checklist.kg.deontic.Switches`): :func:`choose_switches`
picks them on the sections given, :func:`switches_leave_one_section_out` on the other sections
for each one. Run it (the ``train`` extra):

    python bench/experiments/structure_model.py \
        --gold ../shared/data/checklist/privacy_checklist_norms_dev.json

It printed, leave-one-section-out on the paper's dev file: accuracy 0.669, macro-F1 0.509,
prohibit recall 2 of 13, well under the rules (0.842 / 0.774 / 9 of 13).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from privacy_checklist.kg.tree import Node, RegulationTree

from privacy_checklist.kg.switches import TYPES, _figures, section_of

_FLOW = r"(?:use|disclose|sell|request|receive|obtain|share|release|re-?disclose|provide|transmit)"


def _compiled(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(pattern, re.I)) for name, pattern in pairs)


#: (name, pattern) read on a paragraph's own text
TEXT_FEATURES = _compiled(
    (
        ("may_flow", rf"\bmay (?:\w+ ){{0,3}}{_FLOW}"),
        ("may_not_flow", rf"\bmay not (?:\w+ ){{0,3}}{_FLOW}"),
        ("must_not", r"\b(?:must|shall) not\b"),
        ("not_permitted", r"\bnot (?:be )?permitted\b|\bis prohibited\b|\bare prohibited\b"),
        ("prohibited_word", r"\bprohibit"),
        ("may", r"\bmay\b"),
        ("must", r"\b(?:must|shall)\b"),
        ("only", r"\bonly\b"),
        ("unless", r"\bunless\b|\bexcept\b|\bprovided that\b"),
        ("if", r"\bif\b"),
        ("means", r"\bmeans\b|\bincludes?\b|\bthe term\b|\bfor purposes of\b|\bis defined\b"),
        ("flow_word", rf"\b{_FLOW}s?\b|\bdisclosures?\b|\buses?\b"),
        ("ce_subject", r"^\W*(?:\(\w+\)\s*)*(?:a|the) covered (?:entity|health care provider)"),
        (
            "document_subject",
            r"^\W*(?:\(\w+\)\s*)*(?:an?|the) (?:authorization|contract|agreement|notice|plan "
            r"documents?|statement|request|waiver|certification|data use agreement)",
        ),
        ("individual_subject", r"^\W*(?:\(\w+\)\s*)*(?:an?|the) individual"),
        ("right", r"\bright\b"),
        ("colon_end", r":\s*$"),
        ("following", r"\bthe following\b"),
        ("lower_start", r"^\W*(?:\(\w+\)\s*)*[a-z]"),
        ("purpose_to", r"^\W*(?:\(\w+\)\s*)*(?:to|for) "),
        ("to_the_extent", r"\bto the extent\b"),
        ("requirement", r"\brequirements?\b|\bimplementation specification"),
        ("except_list", r"\bexcept(?:ions?)?\b[^.]*[:—]\s*$"),
        ("not_include", r"\bdoes not include\b|\bnot include\b"),
        ("may_rely", r"\bmay rely\b"),
    )
)


#: (name, pattern) read on a paragraph's heading
HEADING_FEATURES = _compiled(
    (
        ("h_standard", r"\bstandard\b"),
        ("h_implementation", r"\bimplementation\b"),
        ("h_prohibit", r"\bprohibit"),
        ("h_permit", r"\bpermitted\b|\buses? and disclosures?\b|\bdisclosures?\b"),
        ("h_exception", r"\bexception"),
        ("h_definition", r"\bdefinition"),
        ("h_right", r"\bright\b"),
        ("h_documentation", r"\bdocumentation\b|\bcontent\b|\belements\b|\brequirements\b"),
    )
)


def _own(tree: RegulationTree, node: Node) -> dict[str, float]:
    out: dict[str, float] = {}
    text = node.text or ""
    for name, pattern in TEXT_FEATURES:
        out[name] = float(bool(pattern.search(text)))
    for name, pattern in HEADING_FEATURES:
        out[name] = float(bool(pattern.search(node.title or "")))
    out["short"] = float(len(text) < 120)
    out["long"] = float(len(text) > 600)
    out["has_children"] = float(bool(node.children))
    return out


def features(
    tree: RegulationTree, node_id: str, rules: Callable[[str], str | None] | None = None
) -> dict[str, float]:
    """The structure of paragraph ``node_id``: its own words, its heading, its parent's and its
    ancestors' (prefixed ``parent:``, ``ancestor:``), its depth; ``rules`` (a paragraph id ->
    the type its own cues give, or None) adds the rules annotator's reading of it and of its
    parent."""
    node = tree[node_id]
    out = _own(tree, node)
    path = [n for n in tree.path(node_id) if n.kind == "paragraph"]
    parent = path[-2] if len(path) > 1 else None
    if parent is not None:
        out.update({f"parent:{k}": v for k, v in _own(tree, parent).items()})
    for ancestor in path[:-2]:
        for k, v in _own(tree, ancestor).items():
            key = f"ancestor:{k}"
            out[key] = max(out.get(key, 0.0), v)
    out["depth"] = min(len(path), 6) / 6.0
    out["top"] = float(len(path) == 1)
    if rules is not None:
        for prefix, unit in (("rules", node), ("parent_rules", parent)):
            found = rules(unit.id) if unit is not None else None
            for kind in TYPES:
                out[f"{prefix}:{kind}"] = float(found == kind)
            out[f"{prefix}:none"] = float(found is None)
    return out


class StructureModel:
    """A multinomial logistic regression over :func:`features` (weights as data)."""

    def __init__(
        self,
        names: Sequence[str],
        weights: Mapping[str, Sequence[float]],
        bias: Mapping[str, float],
        uses_rules: bool,
    ) -> None:
        self.names = list(names)
        self.weights = {k: list(v) for k, v in weights.items()}
        self.bias = dict(bias)
        self.uses_rules = uses_rules

    def predict(self, feats: Mapping[str, float]) -> str:
        scores = {
            kind: self.bias[kind]
            + sum(
                w * feats.get(n, 0.0) for n, w in zip(self.names, self.weights[kind], strict=True)
            )
            for kind in TYPES
        }
        return max(TYPES, key=lambda k: scores[k])

    def to_json(self) -> dict[str, Any]:
        return {
            "names": self.names,
            "weights": self.weights,
            "bias": self.bias,
            "uses_rules": self.uses_rules,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StructureModel:
        return cls(data["names"], data["weights"], data["bias"], bool(data["uses_rules"]))


def fit(
    rows: Sequence[Mapping[str, float]], labels: Sequence[str], c: float = 1.0
) -> StructureModel:
    """Fit the model (scikit-learn, the ``train`` extra), classes weighed by their frequency."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError as exc:  # pragma: no cover - the train extra is part of make setup
        raise RuntimeError(
            "fitting the structure model needs scikit-learn: pip install 'privacy-checklist[train]'"
        ) from exc
    names = sorted({n for r in rows for n in r})
    matrix = [[r.get(n, 0.0) for n in names] for r in rows]
    present = sorted(set(labels))
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    model.fit(matrix, list(labels))
    weights: dict[str, list[float]] = {}
    bias: dict[str, float] = {}
    classes = list(model.classes_)
    for kind in TYPES:
        if kind not in present:  # a type the training paragraphs never show is never predicted
            weights[kind], bias[kind] = [0.0] * len(names), -math.inf
        elif len(present) > 2:
            row = classes.index(kind)
            weights[kind] = [float(w) for w in model.coef_[row]]
            bias[kind] = float(model.intercept_[row])
        elif kind == classes[1]:  # two types: one row scores the second against the first
            weights[kind] = [float(w) for w in model.coef_[0]]
            bias[kind] = float(model.intercept_[0])
        else:
            weights[kind], bias[kind] = [0.0] * len(names), 0.0
    return StructureModel(
        names, weights, bias, uses_rules=any(n.startswith("rules:") for n in names)
    )


def leave_one_section_out(
    tree: RegulationTree,
    gold: Mapping[str, str],
    rules: Callable[[str], str | None] | None = None,
    c: float = 1.0,
) -> dict[str, Any]:
    """For each section of ``gold`` (paragraph id -> type), the model fitted on the other
    sections' paragraphs types this one's; the figures pooled over all and per section."""
    ids = [i for i in gold if i in tree.nodes]
    rows = {i: features(tree, i, rules) for i in ids}
    predicted: dict[str, str] = {}
    sections = sorted({section_of(i) for i in ids})
    per_section = {}
    for section in sections:
        train = [i for i in ids if section_of(i) != section]
        test = [i for i in ids if section_of(i) == section]
        model = fit([rows[i] for i in train], [gold[i] for i in train], c)
        for i in test:
            predicted[i] = model.predict(rows[i])
        per_section[section] = _figures([gold[i] for i in test], [predicted[i] for i in test])
    return {
        "pooled": _figures([gold[i] for i in ids], [predicted[i] for i in ids]),
        "sections": per_section,
        "predicted": predicted,
    }


def main() -> int:
    """Leave-one-section-out figures of the structure model (alone, and with the rules'
    reading as features) on the paper's expert annotations."""
    import argparse
    import json

    from privacy_checklist.kg.kb import load
    from privacy_checklist.kg.norms import PAPER_TYPES, RulesAnnotator
    from privacy_checklist.kg.switches import gold_types

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--gold", required=True, help="privacy_checklist_norms_dev.json")
    args = parser.parse_args()
    kb = load()
    with open(args.gold, encoding="utf-8") as handle:
        gold = json.load(handle)
    types = {k: v for k, v in gold_types(gold, PAPER_TYPES).items() if k in kb.tree.nodes}
    rules = RulesAnnotator(kb.tree)
    for name, reading in (
        ("structure model", leave_one_section_out(kb.tree, types)),
        ("with the rules' reading", leave_one_section_out(kb.tree, types, rules.own)),
    ):
        p = reading["pooled"]
        print(
            f"{name}: {p['n']} paragraphs, accuracy {p['accuracy']:.3f}, macro-F1 "
            f"{p['macro_f1']:.3f}, prohibit recall {p['prohibit_recall']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
