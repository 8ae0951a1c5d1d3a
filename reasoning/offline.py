"""The offline reasoner (ours, the default with no LLM): a verdict from the case's reading,
the retrieved norms and a small linear model.

Features, all explainable: which regulatory roles and HIPAA information types the case's words
reach through the graphs (applicability: is a covered entity, a business associate or their
workforce handling protected health information?), phrase cues kept as data
(``reasoning/data/verdict_cues.json``: without consent, court order, publicity ...), and the
types of the norms BM25 (with the law's terms) and CI-ES retrieve, weighted by rank, and the
case's sentence embedding (all-MiniLM-L6-v2, the mean over chunks of three sentences: how the
case reads as a whole). A multinomial logistic regression over them is fitted on the synthetic
cases only (train and val, 658 cases), its regularisation and class weighting chosen by
five-fold cross-validation on them (``pcheck reasoner train``); the real court cases are never
used. Its weights ship as JSON. Every verdict names the norms it rests on and the matches that
decided it; the embedding's share of the decision is reported as one figure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

LABELS = ("permit", "prohibit", "not_applicable")
EMBEDDING_DIM = 384  # all-MiniLM-L6-v2
#: The shipped models: with the case's sentence embedding, and without it (fast).
MODEL_FILES = {False: "offline_model.json", True: "offline_fast_model.json"}
CASE_LABELS = {"Permit": "permit", "Forbid": "prohibit", "Not Applicable": "not_applicable"}
DEFAULT_PROHIBITION = "164.502(a)"  # no permission covers it: HIPAA's default
FLOW_CHARS = 20_000  # longer narratives get a verdict without a flow reading
EMBED_SENTENCES = 3  # sentences per embedded chunk
EMBED_CHUNKS = 12  # chunks embedded per case (the rest of a very long case is not)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def data_path(name: str) -> Path:
    return Path(str(resources.files("privacy_checklist.reasoning") / "data" / name))


@dataclass
class Verdict:
    """permitted / prohibited / not applicable, what it rests on, and why."""

    label: str
    probabilities: dict[str, float]
    norms: list[dict[str, Any]]
    reasoning: list[str]
    roles: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    cues: list[dict[str, Any]] = field(default_factory=list)
    method: str = "offline"
    raw: str = ""
    flows: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.label,
            "probabilities": self.probabilities,
            "norms": self.norms,
            "reasoning": self.reasoning,
            "roles": self.roles,
            "information_types": self.types,
            "cues": self.cues,
            "method": self.method,
            "raw": self.raw,
            "flows": self.flows,
            **({"retrieved": self.retrieved} if self.retrieved else {}),
        }


class Features:
    """Turns a narrative into the reasoner's feature vector, keeping the evidence."""

    def __init__(
        self, kb: Any, index: Any, cues_file: Path | None = None, embed: bool = True
    ) -> None:
        data = json.loads((cues_file or data_path("verdict_cues.json")).read_text(encoding="utf-8"))
        self.kb, self.index, self.embed = kb, index, embed
        self.cues = {name: re.compile(p, re.I) for name, p in data["cues"].items()}
        self.roles: list[str] = data["roles"]
        self.types: list[str] = data["types"]

    @property
    def names(self) -> list[str]:
        return (
            [f"role:{r}" for r in self.roles]
            + [f"type:{t}" for t in self.types]
            + [f"cue:{c}" for c in self.cues]
            + ["norms:permit", "norms:prohibit", "norms:definition", "ci-es:found", "ci-es:top"]
            + ([f"embedding:{i}" for i in range(EMBEDDING_DIM)] if self.embed else [])
        )

    @staticmethod
    def embedding(text: str) -> np.ndarray:
        """The case's sentence embedding: the mean of its chunks' normalized embeddings."""
        from privacy_checklist.kg.embeddings import model

        sentences = [s for s in SENTENCE_END.split(text) if s.strip()] or [text]
        chunks = [
            " ".join(sentences[i : i + EMBED_SENTENCES])
            for i in range(0, len(sentences), EMBED_SENTENCES)
        ][:EMBED_CHUNKS]
        vectors = model().encode(chunks, normalize_embeddings=True, batch_size=EMBED_CHUNKS)
        return np.asarray(vectors, dtype=float).mean(axis=0)

    def __call__(self, text: str) -> tuple[np.ndarray, dict[str, Any]]:
        from privacy_checklist.retrieval.cies import read_case

        reading = read_case(text, self.kb.roles, self.kb.attributes)
        values = [1.0 if r in reading.roles else 0.0 for r in self.roles]
        values += [1.0 if t in reading.types else 0.0 for t in self.types]
        found_cues = []
        for name, pattern in self.cues.items():
            match = pattern.search(text)
            values.append(1.0 if match else 0.0)
            if match:
                found_cues.append(
                    {
                        "cue": name,
                        "text": match.group(0),
                        "start": match.start(),
                        "end": match.end(),
                    }
                )
        hits = self.index.search(text, "bm25-rewrite", 10)
        weights = {"permit": 0.0, "prohibit": 0.0, "definition": 0.0}
        for rank, hit in enumerate(hits, start=1):
            weights[self.kb.norms[hit.node].norm_type] += 1.0 / rank
        values += [weights["permit"], weights["prohibit"], weights["definition"]]
        ci = self.index.search(text, "ci-es", 5)
        values += [len(ci) / 5.0, ci[0].score if ci else 0.0]
        if self.embed:
            values += self.embedding(text).tolist()
        evidence = {
            "roles": reading.roles,
            "types": reading.types,
            "cues": found_cues,
            "hits": hits,
            "ci": ci,
        }
        return np.asarray(values, dtype=float), evidence


class OfflineReasoner:
    """Apply the shipped (or a given) model.

    ``fast`` uses the model without the sentence embedding (``offline-fast``): several times
    quicker, less accurate (see the README's figures).
    """

    name = "offline"

    def __init__(
        self, kb: Any, index: Any, model_file: Path | None = None, fast: bool = False
    ) -> None:
        self.name = "offline-fast" if fast else "offline"
        self.features = Features(kb, index, embed=not fast)
        path = model_file or data_path(MODEL_FILES[fast])
        if not path.exists():
            raise FileNotFoundError(
                f"{path}: no offline model; train one with pcheck reasoner train"
            )
        model = json.loads(path.read_text(encoding="utf-8"))
        if model["features"] != self.features.names:
            raise ValueError(
                f"{path}: trained on other features; retrain it (pcheck reasoner train)"
            )
        self.coef = np.asarray(model["coef"])
        self.intercept = np.asarray(model["intercept"])
        self.labels: list[str] = model["labels"]
        self.model = model
        self._flows: Any = None

    def check(self, text: str) -> Verdict:
        from privacy_checklist.retrieval.base import check_query

        vector, evidence = self.features(check_query(text))
        flows = self.flows().extract(text) if len(text) <= FLOW_CHARS else []
        logits = self.coef @ vector + self.intercept
        probs = np.exp(logits - logits.max())
        probs = probs / probs.sum()
        label = self.labels[int(np.argmax(probs))]
        # what pushed the chosen label above the others: each feature's weight for it minus its
        # mean weight over the labels, times its value; the embedding counts as one feature
        weights = self.coef[self.labels.index(label)] - self.coef.mean(axis=0)
        contributions = weights * vector
        names = self.features.names
        grouped: dict[str, float] = {}
        for name, value in zip(names, contributions, strict=True):
            key = (
                "embedding (how the case reads as a whole)"
                if name.startswith("embedding:")
                else name
            )
            grouped[key] = grouped.get(key, 0.0) + float(value)
        top = [
            f"{name} {value:+.2f}"
            for name, value in sorted(grouped.items(), key=lambda kv: -kv[1])[:5]
            if value > 0
        ]
        norms = self._norms(label, evidence)
        reasoning = [
            "Applicability: "
            + (
                "roles " + ", ".join(f"{r} (“{p}”)" for r, p in list(evidence["roles"].items())[:8])
                if evidence["roles"]
                else "no regulatory role found in the case"
            )
            + (
                "; information: " + ", ".join(evidence["types"])
                if evidence["types"]
                else "; no HIPAA information type found"
            ),
            "Cues: "
            + (", ".join(f"{c['cue']} (“{c['text']}”)" for c in evidence["cues"]) or "none"),
            "Retrieved norms: "
            + ", ".join(
                f"{h.node} ({self.features.kb.norms[h.node].norm_type})"
                for h in evidence["hits"][:5]
            ),
            f"Decided by: {', '.join(top) or 'the prior'}; probabilities "
            + ", ".join(f"{lab} {p:.2f}" for lab, p in zip(self.labels, probs, strict=True)),
        ]
        return Verdict(
            label,
            {lab: round(float(p), 4) for lab, p in zip(self.labels, probs, strict=True)},
            norms,
            reasoning,
            evidence["roles"],
            evidence["types"],
            evidence["cues"],
            method=self.name,
            flows=[flow.to_json() for flow in flows],
            retrieved=[
                {"id": h.node, "score": round(float(h.score), 4), "method": method}
                for method, hits in (("bm25-rewrite", evidence["hits"]), ("ci-es", evidence["ci"]))
                for h in hits
            ],
        )

    def flows(self) -> Any:
        """The offline flow extractor (built on first use)."""
        if self._flows is None:
            from privacy_checklist.reasoning.flows import FlowExtractor

            kb = self.features.kb
            self._flows = FlowExtractor(kb.role_resolver(False), kb.attribute_resolver(False))
        return self._flows

    def _norms(self, label: str, evidence: dict[str, Any]) -> list[dict[str, Any]]:
        kb = self.features.kb
        if label == "not_applicable":
            return []
        wanted = "permit" if label == "permit" else "prohibit"
        chosen = [
            h for h in evidence["hits"] + evidence["ci"] if kb.norms[h.node].norm_type == wanted
        ]
        if label == "prohibit" and not chosen:
            chosen_ids = [DEFAULT_PROHIBITION]
        else:
            chosen_ids = list(dict.fromkeys(h.node for h in chosen))[:3]
        return [
            {
                "id": node,
                "text": kb.tree[node].text,
                "norm_type": kb.norms[node].norm_type if node in kb.norms else "prohibit",
            }
            for node in chosen_ids
        ]


def train(
    kb: Any,
    index: Any,
    train_cases: list[Any],
    val_cases: list[Any],
    out: Path,
    grid: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
    folds: int = 5,
    progress: Any = None,
    embed: bool = True,
) -> dict[str, Any]:
    """Fit on the synthetic cases; choose C and class weighting by cross-validation; save JSON.

    The synthetic val file (40 cases, 10 prohibitions) is too small to choose on by itself, so
    train and val are pooled and the choice is the best macro-F1 (then accuracy) over stratified
    ``folds``-fold cross-validation; the chosen model is then fitted on all of them.
    """
    from privacy_checklist.kg.extras import require

    require("sklearn", "train", "training the offline reasoner (scikit-learn)")
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    features = Features(kb, index, embed=embed)
    cases = list(train_cases) + list(val_cases)
    rows = []
    for case in cases:
        rows.append(features(case.text)[0])
        if progress is not None:
            progress()
    x = np.array(rows)
    y = np.array([CASE_LABELS[c.label] for c in cases])
    splits = StratifiedKFold(folds, shuffle=True, random_state=0)
    best: tuple[float, float, dict[str, Any]] | None = None
    for balanced in (True, False):
        for c in grid:
            params = {"C": c, "class_weight": "balanced" if balanced else None}
            predicted = cross_val_predict(
                LogisticRegression(max_iter=10000, **params), x, y, cv=splits
            )
            score = (f1_score(y, predicted, average="macro"), accuracy_score(y, predicted))
            if best is None or score > best[:2]:
                best = (*score, params)
    assert best is not None
    macro, accuracy, params = best
    model = LogisticRegression(max_iter=10000, **params).fit(x, y)
    labels = [str(label) for label in model.classes_]
    data = {
        "format": 2,
        "features": features.names,
        "labels": labels,
        "coef": np.round(model.coef_, 6).tolist(),
        "intercept": np.round(model.intercept_, 6).tolist(),
        "params": params,
        "trained_on": f"{len(train_cases)} synthetic train + {len(val_cases)} synthetic val cases",
        "selected_on": f"{folds}-fold cross-validation on those synthetic cases: macro-F1 "
        f"{macro:.3f}, accuracy {accuracy:.3f}",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)
    return data
