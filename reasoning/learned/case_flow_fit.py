"""Fitting the learned case-flow reader (:mod:`~privacy_checklist.reasoning.learned.case_flow`)
on the labelled corpus: each narrative's features (its sentences' vectors from the shipped
condition reader's encoder, pooled, and the roles the rule reader read of its flows), and its
writer's labels of the deciding flow's sender role, recipient role and information type. Needs
scikit-learn (the ``train`` extra).

``pcheck reasoner train --method case-flow`` fits it on every writer and writes the shipped
model; :func:`out_of_fold` gives each narrative the reading of regressions fitted without its
writer (what the corpus's figures and the experiments measure).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.reasoning.learned import case_flow as cfl
from privacy_checklist.reasoning.text import data_path


def labels_of(narratives: Sequence[Any]) -> dict[str, list[str]]:
    """Each head's labels: the deciding flow's sender and recipient roles and information
    type ("none" where the writer named none)."""
    return {head: [n.deciding.parts[head].term or "none" for n in narratives] for head in cfl.HEADS}


def corpus_features(
    narratives: Sequence[Any], cache: Path | None = None
) -> tuple[npt.NDArray[np.float32], list[str]]:
    """The narratives' features (:func:`case_flow.features`: their sentences' vectors from the
    shipped condition reader's encoder, and the roles the rule reader read of their flows),
    and the role vocabulary (every role the rule reader read in them); the vectors kept in
    ``cache`` under a digest of the texts and the graph, the flows under one of the texts and
    the rule reader's settings."""
    from tqdm import tqdm

    from privacy_checklist.reasoning.learned.conditions import shipped

    reader = shipped()
    key = hashlib.sha256(
        json.dumps([reader.encoder.digest, [n.text for n in narratives]]).encode()
    ).hexdigest()[:16]
    stored = cache / f"case-flow-features-{key}.npy" if cache is not None else None
    if stored is not None and stored.exists():
        pooled = np.asarray(np.load(stored), dtype=np.float32)
    else:
        rows = [
            cfl.features(reader.vectors(n.text)[1])
            for n in tqdm(narratives, desc="sentence vectors", unit="narrative")
        ]
        pooled = np.stack(rows).astype(np.float32)
        if stored is not None:
            stored.parent.mkdir(parents=True, exist_ok=True)
            np.save(stored, pooled)
    flows = corpus_flows(narratives, cache)
    roles = sorted(
        {r for found in flows for f in found for r in (*f.sender_roles, *f.recipient_roles)}
    )
    read = np.stack([cfl.rule_roles(found, roles) for found in flows])
    return np.hstack([pooled, read]).astype(np.float32), roles


def corpus_flows(narratives: Sequence[Any], cache: Path | None = None) -> list[list[Any]]:
    """Each narrative's flows as the rule reader reads them; kept in ``cache``."""
    import pickle

    from tqdm import tqdm

    from privacy_checklist.kg import kb as kbmod
    from privacy_checklist.reasoning.checklist.reasoner import ChecklistReasoner

    rules = ChecklistReasoner(kbmod.load(None), conditions=False)
    assert rules.reader is not None
    key = hashlib.sha256(
        json.dumps([rules.settings()["checklist"], [n.text for n in narratives]]).encode()
    ).hexdigest()[:16]
    stored = cache / f"case-flow-rule-flows-{key}.pkl" if cache is not None else None
    if stored is not None and stored.exists():
        return list(pickle.loads(stored.read_bytes()))
    flows = [
        list(rules.reader.read(n.text).flows)
        for n in tqdm(narratives, desc="rule reader", unit="narrative")
    ]
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_bytes(pickle.dumps(flows))
    return flows


def out_of_fold(
    x: npt.NDArray[np.float32],
    narratives: Sequence[Any],
    groups: int,
    cache: Path | None = None,
    roles: Sequence[str] = (),
) -> dict[str, cfl.CaseFlow]:
    """Each narrative's case flow read by regressions fitted without its writer (the writers
    in ``groups`` groups, each left out in turn); kept in ``cache``."""
    from sklearn.model_selection import GroupKFold
    from tqdm import tqdm

    labels = labels_of(narratives)
    writers = [n.writer for n in narratives]
    key = hashlib.sha256(
        json.dumps([x.shape, float(x.sum()), labels, writers, groups, list(roles)]).encode()
    ).hexdigest()[:16]
    stored = cache / f"case-flow-oof-{key}.json" if cache is not None else None
    if stored is not None and stored.exists():
        saved = json.loads(stored.read_text(encoding="utf-8"))
        return {nid: cfl.CaseFlow(*(tuple(p) for p in parts)) for nid, parts in saved.items()}
    said: dict[str, Any] = {}
    split = GroupKFold(n_splits=groups).split(x, groups=writers)
    for train, test in tqdm(list(split), desc="groups of writers left out"):
        arrays = cfl.fit(x[train], {h: [labels[h][i] for i in train] for h in cfl.HEADS}, roles)
        reader = cfl.CaseFlowReader.from_arrays(arrays)
        for i in test:
            said[narratives[i].id] = reader.read_features(x[i])
    if stored is not None:
        stored.write_text(
            json.dumps(
                {
                    nid: [list(p) for p in (c.sender, c.recipient, c.information)]
                    for nid, c in said.items()
                }
            ),
            encoding="utf-8",
        )
    return said


def stand_in(
    narratives: Sequence[Any], groups: int, cache: Path | None = None
) -> Callable[[str, Sequence[Any]], cfl.CaseFlow]:
    """A stand-in for the shipped reader (``ChecklistReasoner(case_flow=...)``): a corpus
    narrative is read by the regressions fitted without its writer (:func:`out_of_fold`), any
    other text by the shipped reader."""
    from privacy_checklist.reasoning.learned.conditions import shipped

    labelled = [n for n in narratives if n.deciding is not None]
    x, roles = corpus_features(labelled, cache)
    said = out_of_fold(x, labelled, groups, cache, roles)
    by_text = {n.text: said[n.id] for n in labelled}

    def read(text: str, flows: Sequence[Any]) -> cfl.CaseFlow:
        if text in by_text:
            return by_text[text]
        reader = shipped()
        return cfl.shipped(reader.encoder.digest).read(reader.vectors(text)[1], flows)

    return read


def train(files: Sequence[Path], out: Path | None = None) -> dict[str, Any]:
    """Fit the reader on every narrative of the corpus files (one writer a file) and write the
    shipped model (or ``out``); returns what was fitted."""
    from privacy_checklist.ingest.corpus import read_corpus
    from privacy_checklist.reasoning.learned.conditions import shipped

    narratives = [n for n in read_corpus(files).narratives if n.deciding is not None]
    x, roles = corpus_features(narratives)
    arrays = cfl.fit(x, labels_of(narratives), roles)
    meta = {
        "graph": shipped().encoder.digest,
        "sources": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
        "narratives": len(narratives),
        "writers": sorted({n.writer for n in narratives}),
        "scale": cfl.SCALE,
        "rule_roles": len(roles),
    }
    target = out or data_path(cfl.MODEL_NAME)
    cfl.save(target, arrays, meta)
    return {"model": str(target), **meta}
