"""The learned condition reader: for each condition kind the catalogue asks about, whether a
narrative states it true, states it false, or does not state it, and the sentence that says so.

It is all-MiniLM-L6-v2 fine-tuned on the labelled corpus's sentences (written by many
independent writers; :mod:`~privacy_checklist.reasoning.learned.condition_fit`), shipped as an
8-bit ONNX graph (``reasoning/data/condition-reader.int8.onnx``) run by the shared encoder
(:class:`~privacy_checklist.kg.encoder.Encoder`: one sentence at a time, no torch), and one
linear layer (``reasoning/data/condition_reader.npz``) giving three probabilities a kind: not
stated, true, false. A kind's fact is read from the sentence most likely to state it; below
:data:`THRESHOLD` it is not stated.

The law stays in the checklist: this module only reads facts. The checklist takes them beside
its rule reader's (:func:`merge`): where the rule reader left a condition unknown, the learned
reader's fact is used; where the two disagree, the learned one wins only when it is at least
:data:`OVERRIDE` sure. Every fact it adds says so (``source`` "learned", its probability and the
sentence in ``evidence``).

Train it again with ``pcheck reasoner train --method conditions`` (the ``embeddings`` and ``train``
extras); the model file records the graph's digest and the kinds it reads, and is refused with
one line when either no longer fits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.reading.types import Fact, Flow
from privacy_checklist.reasoning.text import data_path, sentence_spans

GRAPH_NAME = "condition-reader.int8.onnx"
HEAD_NAME = "condition_reader.npz"
#: the acceptance check's sentences (written for it, never fitted on): a reader that reads any
#: of them the wrong way is not written (:func:`probe_failures`)
PROBES_NAME = "condition_probes.json"
#: a kind is stated when its likeliest sentence is at least this likely to state it
THRESHOLD = 0.5
#: the learned fact replaces the rule reader's different one when it is at least this sure
OVERRIDE = 0.0
#: facts the rule reader derives from the parties' roles: never replaced
KEPT_SOURCES = frozenset({"role"})


class ConditionModelError(RuntimeError):
    """The condition reader's model is missing or does not fit the catalogue."""


@dataclass(frozen=True)
class Read:
    """One kind's reading: its value (None: not stated), how likely the sentence states it,
    how likely that value is, and the sentence's span."""

    kind: str
    value: bool | None
    stated: float
    confidence: float
    start: int
    end: int
    evidence: str

    def fact(self) -> Fact:
        return Fact(
            self.kind,
            self.value,
            self.start,
            self.end,
            f"{self.evidence} (learned reader, {self.confidence:.2f})",
            "learned",
        )


class ConditionReader:
    """The shipped condition reader (see the module docstring)."""

    def __init__(self, graph: Path | None = None, head: Path | None = None) -> None:
        from privacy_checklist.kg.encoder import TOKENIZER, Encoder, EncoderError

        graph = graph or data_path(GRAPH_NAME)
        head = head or data_path(HEAD_NAME)
        if not head.exists() or not graph.exists():
            raise ConditionModelError(
                f"{head.name}: the learned condition reader is missing; train it with "
                "pcheck reasoner train --method conditions"
            )
        try:
            self.encoder = Encoder(graph, TOKENIZER)
        except EncoderError as exc:
            raise ConditionModelError(str(exc)) from exc
        with np.load(head, allow_pickle=False) as saved:
            self.weights = saved["weights"].astype(np.float32)
            self.bias = saved["bias"].astype(np.float32)
            meta = json.loads(str(saved["meta"]))
        self.kinds: list[str] = list(meta["kinds"])
        self.scale = float(meta["scale"])
        self.meta = meta
        if meta.get("graph") != self.encoder.digest:
            raise ConditionModelError(
                f"{head.name}: fitted on another graph ({meta.get('graph')}, not "
                f"{self.encoder.digest}); train it again with pcheck reasoner train --method "
                "conditions"
            )
        if self.weights.shape != (self.encoder_dim, len(self.kinds) * 3):
            raise ConditionModelError(f"{head.name}: its layer does not fit its kinds")

    @property
    def encoder_dim(self) -> int:
        from privacy_checklist.kg.encoder import DIM

        return DIM

    def vectors(self, text: str) -> tuple[list[tuple[int, int]], npt.NDArray[np.float32]]:
        """The sentences' spans and their vectors (what the learned case-flow reader reads
        too, so a check encodes each sentence once)."""
        spans = sentence_spans(text) or ([(0, len(text))] if text.strip() else [])
        if not spans:
            return [], np.zeros((0, self.encoder_dim), dtype=np.float32)
        return spans, self.encoder.encode([text[a:b] for a, b in spans])

    def probabilities(self, text: str) -> tuple[list[tuple[int, int]], npt.NDArray[np.float32]]:
        """The sentences' spans and, for each, the probabilities (kinds, 3) of not stated,
        true and false."""
        spans, vectors = self.vectors(text)
        return spans, self.probabilities_of(vectors)

    def probabilities_of(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The probabilities (sentences, kinds, 3) of sentences' vectors."""
        if not len(vectors):
            return np.zeros((0, len(self.kinds), 3), dtype=np.float32)
        logits = (vectors * self.scale) @ self.weights + self.bias
        logits = logits.reshape(len(vectors), len(self.kinds), 3)
        logits -= logits.max(axis=-1, keepdims=True)
        exp = np.exp(logits)
        out: npt.NDArray[np.float32] = (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)
        return out

    def read(self, text: str, threshold: float = THRESHOLD) -> dict[str, Read]:
        """Each kind's reading of ``text``."""
        spans, probs = self.probabilities(text)
        return reads_of(text, spans, probs, self.kinds, threshold)


def reads_of(
    text: str,
    spans: Sequence[tuple[int, int]],
    probs: npt.NDArray[np.float32],
    kinds: Sequence[str],
    threshold: float = THRESHOLD,
) -> dict[str, Read]:
    """Each kind's reading from its sentences' probabilities: the sentence likeliest to state
    it, the likelier of true and false there, not stated below ``threshold``."""
    if not spans:
        return {}
    stated = 1.0 - probs[:, :, 0]
    best = stated.argmax(axis=0)
    out: dict[str, Read] = {}
    for index, kind in enumerate(kinds):
        row = int(best[index])
        p = probs[row, index]
        likely = float(stated[row, index])
        start, end = spans[row]
        if likely < threshold:
            out[kind] = Read(kind, None, likely, 1.0 - likely, start, end, text[start:end])
            continue
        value = bool(p[1] >= p[2])
        out[kind] = Read(kind, value, likely, float(max(p[1], p[2])), start, end, text[start:end])
    return out


def merge(
    flows: Sequence[Flow], reads: Mapping[str, Read], override: float = OVERRIDE
) -> list[Flow]:
    """The flows with the learned facts beside the rule reader's (see the module docstring)."""
    out = []
    for flow in flows:
        facts = dict(flow.facts)
        for kind, read in reads.items():
            if read.value is None:
                continue
            old = facts.get(kind)
            if old is not None and old.source in KEPT_SOURCES:
                continue
            unknown = old is None or old.value is None
            sure = read.confidence * read.stated >= override
            if unknown or (old is not None and old.value != read.value and sure):
                facts[kind] = read.fact()
        out.append(replace(flow, facts=facts) if facts != flow.facts else flow)
    return out


@lru_cache(maxsize=1)
def _load() -> ConditionReader:
    return ConditionReader()


def shipped() -> ConditionReader:
    """The shipped reader, loaded once a process.

    Raises:
        ConditionModelError: it is missing or does not fit.
    """
    return _load()


def forget() -> None:
    """Forget the loaded reader: the next :func:`shipped` loads the files again."""
    _load.cache_clear()


@dataclass(frozen=True)
class Probe:
    """One sentence of the acceptance check and the value it states for one kind (None: not
    stated)."""

    text: str
    kind: str
    value: bool | None


def probes(path: Path | None = None) -> list[Probe]:
    """The acceptance check's probes (``reasoning/data/condition_probes.json``)."""
    data = json.loads((path or data_path(PROBES_NAME)).read_text(encoding="utf-8"))
    return [Probe(p["text"], p["kind"], p["value"]) for p in data["probes"]]


def probe_failures(reader: ConditionReader, checks: Sequence[Probe] | None = None) -> list[str]:
    """The probes ``reader`` reads the wrong way, each as one line (empty: it passes). A
    reader that reads a plainly signed authorization as a missing one gives the confident
    wrong answer the checklist must not give, whatever its figures elsewhere."""
    failed = []
    for probe in probes() if checks is None else checks:
        if probe.kind not in reader.kinds:
            failed.append(f"{probe.kind}: not a kind the reader reads")
            continue
        read = reader.read(probe.text)[probe.kind]
        if read.value is not probe.value:
            said = "not stated" if read.value is None else str(read.value).lower()
            wanted = "not stated" if probe.value is None else str(probe.value).lower()
            failed.append(
                f"{probe.kind} read {said} ({read.confidence:.2f}), not {wanted}: {probe.text!r}"
            )
    return failed


def digest() -> str:
    """The shipped model's digest (its layer's file, which records its graph's), "none" when
    it is missing: what an evaluation's reuse rule compares."""
    import hashlib

    head = data_path(HEAD_NAME)
    return hashlib.sha256(head.read_bytes()).hexdigest()[:16] if head.exists() else "none"


def describe(reader: ConditionReader) -> dict[str, Any]:
    """What the model file says of how it was fitted (for ``settings``)."""
    return {k: v for k, v in reader.meta.items() if k != "kinds"}
