"""What a message's purpose is and what it needs, read by models learned from drafts by many
hands (issue 28, items 1 and 2). The law stays in the data file; these read the words.

- :class:`PurposeModel` reads what the person typed (the recipient and the purpose's words) into
  one of the purposes the law names (``law`` in ``reasoning/data/guard_purposes.json``): word and
  word-pair weights (tf-idf) under a logistic layer. Below its confidence floor it says so, and
  the guard falls back on the data file's words or asks.
- :class:`NeedModel` reads each sentence of the message, beside what the person typed, and
  gives the chance that the sentence carries only what the purpose does not need (a custody
  fight in a fitness-for-duty result, meth use in a claim): the static encoder's vectors
  (:mod:`privacy_checklist.kg.static`, distilled from the shipped MiniLM) of the sentence and
  of the purpose, the sentence's place in the message, and one
  hidden layer. Such a sentence goes whatever types its words are, or none.
- The condition model (a :class:`PurposeModel` over two classes, ``absent`` and ``stated``)
  reads whether the words state the condition a purpose needs (an authorization, an order
  with its notice, a waiver, a claim under workers' compensation) in whatever phrasing: the
  purpose's words, the recipient and the message, word and word-pair tf-idf under a logistic
  layer. The law still decides what follows from it.

Both are fitted by ``python -m privacy_checklist.reasoning.guard.need_fit`` (``make train``) on
the drafts corpus (``bench/data/guard_corpus``) and ship in ``reasoning/data/guard_need.npz``;
``bench/guard_corpus/measure.py`` measures them leaving each writer out.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

NAME = "guard_need.npz"
#: from the purpose model's floor to this, its reading stands only where the data file's words
#: read nothing or the same guard purpose (leaving drafts writers out, floor 0.1: unneeded
#: identifiers left 0.240 against 0.218 deciding alone and 0.294 at a floor of 0.2; on the
#: guard's six older sets, verdicts 0.851 against 0.819 deciding alone)
SURE = 0.2
#: how strongly the identifier head's input marks the identifier's type beside the vectors
TYPE_WEIGHT = 3.0
#: the words tf-idf reads (scikit-learn's default token pattern, lower-cased)
_TOKEN = re.compile(r"(?u)\b\w\w+\b")


class NeedModelError(RuntimeError):
    """The shipped need models are missing, damaged or fitted on another encoder."""


def context_text(to: str | None, purpose: str | None) -> str:
    """What the person typed, as the models read it."""
    return f"{(to or '').strip()} | {(purpose or '').strip()}"


def condition_text(words: str, said: str) -> str:
    """What the condition model reads: the purpose's words, then the recipient, what was said
    before and the message (``said``, as ``Guard.permission`` joins them)."""
    return f"{words.strip()} ; {said}"


def terms(text: str) -> list[str]:
    """The words and word pairs tf-idf counts."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


def positions(count: int) -> npt.NDArray[np.float32]:
    """Each sentence's place in a message of ``count`` sentences: how far in, and whether first."""
    out = np.zeros((count, 2), dtype=np.float32)
    for n in range(count):
        out[n] = (n / count, 1.0 if n == 0 else 0.0)
    return out


@dataclass(frozen=True)
class PurposeGuess:
    """The purpose the model reads, how sure it is, and the runner-up."""

    key: str
    probability: float
    second: str
    second_probability: float
    #: every purpose and its probability, likeliest first
    ranked: tuple[tuple[str, float], ...] = ()

    def best_of(self, keys: set[str]) -> str | None:
        """The likeliest of ``keys``."""
        return next((k for k, _ in self.ranked if k in keys), None)


class PurposeModel:
    """tf-idf and a logistic layer over the purposes the law names (see the module docstring)."""

    def __init__(
        self,
        vocabulary: Sequence[str],
        idf: npt.NDArray[np.float32],
        coef: npt.NDArray[np.float32],
        intercept: npt.NDArray[np.float32],
        classes: Sequence[str],
    ) -> None:
        self.index = {term: n for n, term in enumerate(vocabulary)}
        self.idf = idf.astype(np.float32)
        self.coef = coef.astype(np.float32)
        self.intercept = intercept.astype(np.float32)
        self.classes = list(classes)

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        """The text's tf-idf vector (sublinear counts, smoothed idf, unit length)."""
        counts = Counter(t for t in terms(text) if t in self.index)
        out = np.zeros(len(self.index), dtype=np.float32)
        for term, count in counts.items():
            n = self.index[term]
            out[n] = (1.0 + math.log(count)) * self.idf[n]
        norm = float(np.linalg.norm(out))
        return out / norm if norm else out

    def chances(self, text: str) -> npt.NDArray[np.float32] | None:
        """Each class's probability for ``text``, or None when no word the model knows is in
        it."""
        x = self.vector(text)
        if not x.any():
            return None
        logits = self.coef @ x + self.intercept
        p: npt.NDArray[np.float32] = np.exp(logits - logits.max())
        return p / float(p.sum())

    def read(self, to: str | None, purpose: str | None) -> PurposeGuess | None:
        """The likeliest purpose, or None when no word the model knows was typed."""
        p = self.chances(context_text(to, purpose))
        if p is None:
            return None
        order = np.argsort(-p)
        first, second = order[:2]
        return PurposeGuess(
            self.classes[first],
            float(p[first]),
            self.classes[second],
            float(p[second]),
            tuple((self.classes[n], float(p[n])) for n in order),
        )


class NeedModel:
    """One hidden layer over the sentence's and the purpose's vectors (see the docstring)."""

    def __init__(
        self,
        w1: npt.NDArray[np.float32],
        b1: npt.NDArray[np.float32],
        w2: npt.NDArray[np.float32],
        b2: float,
        threshold: float,
    ) -> None:
        self.w1, self.b1 = w1.astype(np.float32), b1.astype(np.float32)
        self.w2, self.b2 = w2.astype(np.float32), float(b2)
        self.threshold = threshold
        self._seen: dict[str, npt.NDArray[np.float32]] = {}
        #: the identifier head: one hidden layer over the identifier's type, the purpose's
        #: vector and its sentence's (set by :func:`load` when the file has one)
        self.identifier: tuple[npt.NDArray[np.float32], ...] = ()
        self.types: list[str] = []
        self.identifier_threshold = 1.0

    def identifiers(
        self, found: Sequence[tuple[str, str]], to: str | None, purpose: str | None
    ) -> list[float]:
        """For each identifier (its type and its sentence), the chance the purpose does not
        need it; 0 for every one when the file has no identifier head."""
        if not found or not self.identifier:
            return [0.0] * len(found)
        vectors = self.vectors([*(s for _, s in found), context_text(to, purpose)])
        kinds = np.zeros((len(found), len(self.types) + 1), dtype=np.float32)
        for row, (kind, _) in enumerate(found):
            at = self.types.index(kind) if kind in self.types else len(self.types)
            kinds[row, at] = TYPE_WEIGHT
        context = np.repeat(vectors[-1:], len(found), axis=0)
        x = np.hstack([kinds, context, vectors[:-1]])
        w1, b1, w2, b2 = self.identifier
        hidden = np.maximum(x @ w1 + b1, 0.0)
        logit = hidden @ w2 + b2
        return [float(v) for v in 1.0 / (1.0 + np.exp(-logit))]

    def beside(self, sentences: Sequence[str], to: str | None, purpose: str | None) -> list[float]:
        """For each sentence, the chance it carries only what the purpose does not need."""
        if not sentences:
            return []
        vectors = self.vectors([*sentences, context_text(to, purpose)])
        context = np.repeat(vectors[-1:], len(sentences), axis=0)
        x = np.hstack([vectors[:-1], context, positions(len(sentences))])
        return [float(p) for p in self.probabilities(x)]

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The encoder's vectors, each text encoded once (a rewrite's re-check reads again
        the sentences it kept); the last 512 texts are remembered."""
        from privacy_checklist.kg.static import static_encoder

        new = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if new:
            self._seen.update(zip(new, static_encoder().encode(new), strict=True))
        out = np.stack([self._seen[t] for t in texts])
        for old in list(self._seen)[: max(0, len(self._seen) - 512)]:
            del self._seen[old]
        return out

    def probabilities(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The chance each row is beside the purpose."""
        hidden = np.maximum(x @ self.w1 + self.b1, 0.0)
        logit = hidden @ self.w2 + self.b2
        out: npt.NDArray[np.float32] = (1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
        return out


@dataclass(frozen=True)
class NeedModels:
    """The two models, fitted together on one corpus."""

    purpose: PurposeModel
    need: NeedModel
    #: the purpose model's confidence floor: below it the guard does not take its reading
    floor: float
    about: dict[str, Any]
    #: whether the condition a purpose needs is stated (classes "absent" and "stated")
    condition: PurposeModel | None = None

    def stated(self, words: str, said: str) -> float | None:
        """The chance the words state the condition the purpose needs (None: no model, or
        no word it knows)."""
        if self.condition is None:
            return None
        p = self.condition.chances(condition_text(words, said))
        return None if p is None else float(p[self.condition.classes.index("stated")])


def save(path: Path, models: NeedModels, encoder_digest: str) -> None:
    """Write the models whole or not at all."""
    tmp = path.with_name(path.name + ".tmp.npz")
    p, n = models.purpose, models.need
    meta = {**models.about, "encoder": encoder_digest, "floor": models.floor}
    write: Any = np.savez_compressed  # its stubs take no mapping of arrays
    write(
        tmp,
        **_arrays(p, ""),
        w1=n.w1.astype(np.float16),
        b1=n.b1,
        w2=n.w2,
        b2=np.array([n.b2, n.threshold], dtype=np.float32),
        **(
            {
                "id_w1": n.identifier[0].astype(np.float16),
                "id_b1": n.identifier[1],
                "id_w2": n.identifier[2],
                "id_b2": np.array([float(n.identifier[3][0]), n.identifier_threshold]),
                "id_types": np.array(json.dumps(n.types)),
            }
            if n.identifier
            else {}
        ),
        **(_arrays(models.condition, "cond_") if models.condition is not None else {}),
        meta=np.array(json.dumps(meta)),
    )
    tmp.replace(path)


def _arrays(model: PurposeModel, prefix: str) -> dict[str, Any]:
    """A tf-idf model's arrays as :func:`save` writes them, their names after ``prefix``."""
    vocabulary = sorted(model.index, key=model.index.__getitem__)
    return {
        f"{prefix}vocabulary": np.array(json.dumps(vocabulary)),
        f"{prefix}classes": np.array(json.dumps(model.classes)),
        f"{prefix}idf": model.idf.astype(np.float16),
        f"{prefix}coef": model.coef.astype(np.float16),
        f"{prefix}intercept": model.intercept,
    }


def _stored(data: Any, prefix: str) -> PurposeModel:
    """The tf-idf model :func:`_arrays` wrote under ``prefix``."""
    return PurposeModel(
        json.loads(str(data[f"{prefix}vocabulary"])),
        data[f"{prefix}idf"],
        data[f"{prefix}coef"],
        data[f"{prefix}intercept"],
        json.loads(str(data[f"{prefix}classes"])),
    )


def load(path: Path) -> NeedModels:
    """The models in ``path``.

    Raises:
        NeedModelError: it is missing, damaged, or fitted on another sentence encoder.
    """
    from privacy_checklist.kg.static import table_digest

    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            purpose = _stored(data, "")
            b2, threshold = (float(v) for v in data["b2"])
            need = NeedModel(data["w1"], data["b1"], data["w2"], b2, threshold)
            if "id_w1" in data:
                bias, need.identifier_threshold = (float(v) for v in data["id_b2"])
                need.identifier = (
                    data["id_w1"].astype(np.float32),
                    data["id_b1"].astype(np.float32),
                    data["id_w2"].astype(np.float32),
                    np.array([bias], dtype=np.float32),
                )
                need.types = json.loads(str(data["id_types"]))
            condition = _stored(data, "cond_") if "cond_coef" in data else None
    except (OSError, KeyError, ValueError) as exc:
        raise NeedModelError(
            f"{path}: the guard's need models cannot be read ({exc}); refit them with "
            "python -m privacy_checklist.reasoning.guard.need_fit bench/data/guard_corpus"
        ) from exc
    if meta.get("encoder") and meta["encoder"] != table_digest():
        raise NeedModelError(
            f"{path}: fitted on another sentence encoder ({meta['encoder']}); refit with "
            "python -m privacy_checklist.reasoning.guard.need_fit bench/data/guard_corpus"
        )
    return NeedModels(purpose, need, float(meta["floor"]), meta, condition)


@cache
def shipped() -> NeedModels:
    """The models that ship with the package."""
    from privacy_checklist.reasoning.text import data_path

    return load(data_path(NAME))
