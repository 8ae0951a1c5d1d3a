"""The offline reasoners, offline and offline-fast (the default method is the checklist): a
verdict from the case's reading, the retrieved norms and a small linear model.

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

The two retrieval steps are keyword arguments of :class:`Features` (and of
:class:`OfflineReasoner`), plain callables with defaults: ``norm_search`` (default
:func:`rewrite_hits`, BM25 with the law's terms, top 10) and ``ci_search`` (default
:func:`ci_hits`, CI-ES, top 5). A model is fitted on the features of its steps: swapping one
means training again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from privacy_checklist.kg.encoder import graph_digest
from privacy_checklist.reasoning.text import data_path
from privacy_checklist.reasoning.text import sentences as split_sentences
from privacy_checklist.reasoning.verdict import CitedNorm, Label, RetrievedNorm, Verdict
from privacy_checklist.retrieval.base import Hit, SearchIndex
from privacy_checklist.retrieval.text import TOKENIZER

if TYPE_CHECKING:
    from privacy_checklist.kg.kb import KnowledgeBase
    from privacy_checklist.reasoning.reading.flows import FlowExtractor

Vector = npt.NDArray[np.float64]
EMBEDDING_DIM = 384  # all-MiniLM-L6-v2
#: The shipped models: with the case's sentence embedding, and without it (fast).
MODEL_FILES = {False: "offline_model.json", True: "offline_fast_model.json"}
NORM_HITS = 10  # norms the default ``norm_search`` retrieves
CI_HITS = 5  # norms the default ``ci_search`` retrieves (the ``ci-es:found`` feature's scale)
DEFAULT_PROHIBITION = "164.502(a)"  # no permission covers it: HIPAA's default
FLOW_CHARS = 20_000  # longer narratives get a verdict without a flow reading
EMBED_SENTENCES = 3  # sentences per embedded chunk
EMBED_CHUNKS = 12  # chunks embedded per case (the rest of a very long case is not)


#: A retrieval step of the features: the index and the case's text -> hits.
Step = Callable[[SearchIndex, str], list[Hit]]


def rewrite_hits(index: SearchIndex, text: str) -> list[Hit]:
    """The default ``norm_search``: BM25 with the law's terms appended (``bm25-rewrite``)."""
    return index.search(text, "bm25-rewrite", NORM_HITS)


def ci_hits(index: SearchIndex, text: str) -> list[Hit]:
    """The default ``ci_search``: the norms whose CI characteristics match (``ci-es``)."""
    return index.search(text, "ci-es", CI_HITS)


@dataclass
class Evidence:
    """What the features of one case were read from: the roles and HIPAA information types its
    words reach (each with the phrase), the cues found, and the hits of the two retrieval
    steps."""

    roles: dict[str, str]
    hipaa_types: dict[str, str]
    cues: list[dict[str, Any]]
    hits: list[Hit]
    ci: list[Hit]


class Features:
    """Turns a narrative into the reasoner's feature vector, keeping the evidence.

    Args:
        kb: the knowledge base (its graphs read the case; its norms type the hits).
        index: what the retrieval steps search.
        cues_file: the cues and the roles and types that are features (default: shipped).
        embed: whether the case's sentence embedding is a feature.
        norm_search: the step whose hits' norm types are features (default :func:`rewrite_hits`).
        ci_search: the step whose hits count as CI-ES features (default :func:`ci_hits`).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        index: SearchIndex,
        cues_file: Path | None = None,
        *,
        embed: bool = True,
        norm_search: Step = rewrite_hits,
        ci_search: Step = ci_hits,
    ) -> None:
        data = json.loads((cues_file or data_path("verdict_cues.json")).read_text(encoding="utf-8"))
        self.kb, self.index, self.embed = kb, index, embed
        self.norm_search, self.ci_search = norm_search, ci_search
        self.cues = {name: re.compile(p, re.I) for name, p in data["cues"].items()}
        self.roles: list[str] = data["roles"]
        self.hipaa_types: list[str] = data["types"]

    @property
    def names(self) -> list[str]:
        return (
            [f"role:{r}" for r in self.roles]
            + [f"type:{t}" for t in self.hipaa_types]
            + [f"cue:{c}" for c in self.cues]
            + ["norms:permit", "norms:prohibit", "norms:definition", "ci-es:found", "ci-es:top"]
            + ([f"embedding:{i}" for i in range(EMBEDDING_DIM)] if self.embed else [])
        )

    @staticmethod
    def embedding(text: str) -> Vector:
        """The case's sentence embedding: the mean of its chunks' normalized embeddings (the
        shipped ONNX encoder, :mod:`privacy_checklist.kg.encoder`: no torch)."""
        from privacy_checklist.kg.encoder import encoder

        sentences = split_sentences(text) or [text]
        chunks = [
            " ".join(sentences[i : i + EMBED_SENTENCES])
            for i in range(0, len(sentences), EMBED_SENTENCES)
        ][:EMBED_CHUNKS]
        vectors = encoder().encode(chunks)
        mean: Vector = np.asarray(vectors, dtype=float).mean(axis=0)
        return mean

    def __call__(self, text: str, embed_text: str | None = None) -> tuple[Vector, Evidence]:
        """The case's features and what they were read from; the embedding is of
        ``embed_text`` when given (the checklist's layer: the sentences its flows were read
        from), else of ``text``."""
        from privacy_checklist.retrieval.cies import read_case

        reading = read_case(text, self.kb.roles, self.kb.attributes)
        values = [1.0 if r in reading.roles else 0.0 for r in self.roles]
        values += [1.0 if t in reading.hipaa_types else 0.0 for t in self.hipaa_types]
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
        hits = self.norm_search(self.index, text)
        weights = {"permit": 0.0, "prohibit": 0.0, "definition": 0.0}
        for rank, hit in enumerate(hits, start=1):
            weights[self.kb.norms[hit.node].norm_type] += 1.0 / rank
        values += [weights["permit"], weights["prohibit"], weights["definition"]]
        ci = self.ci_search(self.index, text)
        values += [len(ci) / float(CI_HITS), ci[0].score if ci else 0.0]
        if self.embed:
            values += self.embedding(text if embed_text is None else embed_text).tolist()
        evidence = Evidence(
            roles=reading.roles,
            hipaa_types=reading.hipaa_types,
            cues=found_cues,
            hits=hits,
            ci=ci,
        )
        return np.asarray(values, dtype=float), evidence


class OfflineReasoner:
    """Apply the shipped (or a given) model.

    ``fast`` uses the model without the sentence embedding (``offline-fast``): several times
    quicker, less accurate (see the README's figures). ``norm_search`` and ``ci_search`` are
    :class:`Features`' retrieval steps.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        index: SearchIndex,
        model_file: Path | None = None,
        *,
        fast: bool = False,
        norm_search: Step = rewrite_hits,
        ci_search: Step = ci_hits,
    ) -> None:
        self.name = "offline-fast" if fast else "offline"
        self.features = Features(
            kb, index, embed=not fast, norm_search=norm_search, ci_search=ci_search
        )
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
        if self.features.embed and model.get("encoder") != graph_digest():
            raise ValueError(
                f"{path}: trained on another sentence encoder's vectors; retrain it "
                "(pcheck reasoner train)"
            )
        if model.get("tokenizer") != TOKENIZER:
            raise ValueError(
                f"{path}: trained on retrieval over other tokens (another stemmer or stop "
                "words); retrain it (pcheck reasoner train)"
            )
        self.coef = np.asarray(model["coef"])
        self.intercept = np.asarray(model["intercept"])
        self.labels: list[str] = model["labels"]
        self.model: dict[str, Any] = model
        self._flows: FlowExtractor | None = None

    def settings(self) -> dict[str, Any]:
        """The shipped model and cues, and the knowledge base, as digests."""
        from privacy_checklist.reasoning.evaluation.digests import offline_settings

        return offline_settings(self.model, self.features)

    def check(self, text: str) -> Verdict:
        from privacy_checklist.retrieval.base import check_query

        vector, evidence = self.features(check_query(text))
        flows = self.flows().extract(text) if len(text) <= FLOW_CHARS else []
        logits = self.coef @ vector + self.intercept
        probs = np.exp(logits - logits.max())
        probs = probs / probs.sum()
        label = Label(self.labels[int(np.argmax(probs))])
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
        reasoning = [
            "Applicability: "
            + (
                "roles " + ", ".join(f"{r} (“{p}”)" for r, p in list(evidence.roles.items())[:8])
                if evidence.roles
                else "no regulatory role found in the case"
            )
            + (
                "; information: " + ", ".join(evidence.hipaa_types)
                if evidence.hipaa_types
                else "; no HIPAA information type found"
            ),
            "Cues: " + (", ".join(f"{c['cue']} (“{c['text']}”)" for c in evidence.cues) or "none"),
            "Retrieved norms: "
            + ", ".join(
                f"{h.node} ({self.features.kb.norms[h.node].norm_type})" for h in evidence.hits[:5]
            ),
            f"Decided by: {', '.join(top) or 'the prior'}; probabilities "
            + ", ".join(f"{lab} {p:.2f}" for lab, p in zip(self.labels, probs, strict=True)),
        ]
        retrieved = [
            RetrievedNorm(id=h.node, score=round(float(h.score), 4), method=h.method, via=h.via)
            for h in (*evidence.hits, *evidence.ci)
        ]
        return Verdict(
            label=label,
            method=self.name,
            probabilities={
                lab: round(float(p), 4) for lab, p in zip(self.labels, probs, strict=True)
            },
            norms=self._norms(label, evidence),
            reasoning=reasoning,
            roles=evidence.roles,
            hipaa_types=evidence.hipaa_types,
            cues=evidence.cues,
            flows=flows,
            retrieved=retrieved or None,
        )

    def flows(self) -> FlowExtractor:
        """The offline flow extractor (built on first use)."""
        if self._flows is None:
            from privacy_checklist.reasoning.reading.flows import FlowExtractor

            kb = self.features.kb
            self._flows = FlowExtractor(
                kb.role_resolver(embeddings=False), kb.attribute_resolver(embeddings=False)
            )
        return self._flows

    def _norms(self, label: Label, evidence: Evidence) -> list[CitedNorm]:
        kb = self.features.kb
        if label is Label.NOT_APPLICABLE:
            return []
        wanted = "permit" if label is Label.PERMIT else "prohibit"
        chosen = [h for h in evidence.hits + evidence.ci if kb.norms[h.node].norm_type == wanted]
        if label is Label.PROHIBIT and not chosen:
            chosen_ids = [DEFAULT_PROHIBITION]
        else:
            chosen_ids = list(dict.fromkeys(h.node for h in chosen))[:3]
        return [
            CitedNorm(
                id=node,
                text=kb.tree[node].text,
                norm_type=kb.norms[node].norm_type if node in kb.norms else "prohibit",
            )
            for node in chosen_ids
        ]


class TrainingCase(Protocol):
    """What training reads of a case (:class:`privacy_checklist.ingest.cases.Case`)."""

    @property
    def text(self) -> str: ...

    @property
    def label(self) -> str: ...


def train(
    kb: KnowledgeBase,
    index: SearchIndex,
    train_cases: Sequence[TrainingCase],
    val_cases: Sequence[TrainingCase],
    out: Path,
    *,
    grid: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
    folds: int = 5,
    progress: Callable[[], object] | None = None,
    embed: bool = True,
) -> dict[str, Any]:
    """Fit on the synthetic cases; choose C and class weighting by cross-validation; save JSON.

    The synthetic val file (40 cases, 10 prohibitions) is too small to choose on by itself, so
    train and val are pooled and the choice is the best macro-F1 (then accuracy) over stratified
    ``folds``-fold cross-validation; the chosen model is then fitted on all of them.
    """
    from privacy_checklist.kg.extras import require
    from privacy_checklist.reasoning.learned import fit

    require("sklearn", "train", "training the offline reasoner (scikit-learn)")
    features = Features(kb, index, embed=embed)
    cases = list(train_cases) + list(val_cases)
    rows = []
    for case in cases:
        rows.append(features(case.text)[0])
        if progress is not None:
            progress()
    fitted = fit.fit(np.array(rows), fit.gold(cases), grid, folds)
    macro, accuracy = fitted.score
    data = {
        "format": 2,
        "features": features.names,
        "encoder": graph_digest() if features.embed else "",
        "tokenizer": TOKENIZER,
        **fit.coefficients(fitted.model),
        "params": fitted.params,
        "trained_on": f"{len(train_cases)} synthetic train + {len(val_cases)} synthetic val cases",
        "selected_on": f"{folds}-fold cross-validation on those synthetic cases: macro-F1 "
        f"{macro:.3f}, accuracy {accuracy:.3f}",
    }
    fit.write_model(out, data)
    return data
