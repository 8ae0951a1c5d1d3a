"""Export the fitted condition reader (:mod:`~privacy_checklist.reasoning.learned.
condition_fit`) as the shipped one: an 8-bit ONNX graph and its linear layer, refitted on that
graph's vectors and checked against the acceptance probes before anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.kg.extras import require
from privacy_checklist.reasoning.learned.condition_fit import (
    NEEDED_FOR,
    SCALE,
    VALUES,
    ProbeFailure,
    Rows,
    _Model,
    pair_weights,
    predict,
    weighted_loss,
)


def refit_head(
    vectors: npt.NDArray[np.float32],
    labels: npt.NDArray[np.int64],
    start: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]],
    pairs: npt.NDArray[np.float32],
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
    w = torch.from_numpy(pairs)
    for _ in range(steps):
        logits = (x @ weight + bias).view(len(x), -1, len(VALUES))
        loss = weighted_loss(torch, logits, y, w)
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
    *,
    probes: bool = True,
) -> dict[str, Any]:
    """Export the fitted reader: the encoder as an 8-bit ONNX graph and the linear layer with
    what it reads (``meta`` besides: how it was fitted), both whole or neither; with ``rows``
    (the training sentences), the layer is fitted again on the 8-bit graph's vectors
    (:func:`refit_head`). Returns what was written and, on the training sentences given in
    ``meta['check']``, how far the 8-bit reader's probabilities are from the fitted one's
    (largest absolute difference) and how often its likeliest value is the same.

    Raises:
        ProbeFailure: with ``probes``, the 8-bit reader reads some of the acceptance check's
            sentences the wrong way; nothing is written.
    """
    import hashlib
    import json
    import tempfile

    torch = require("torch", "embeddings", NEEDED_FOR)
    transformers = require("transformers", "embeddings", NEEDED_FOR)
    quantization = require("onnxruntime.quantization", "embeddings", NEEDED_FOR + " (onnx)")

    from privacy_checklist.kg.encoder import quantised_graph
    from privacy_checklist.reasoning.learned.conditions import ConditionReader, probe_failures

    check = list(meta.pop("check", []))
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        model.bert.save_pretrained(str(where / "model"))
        model.tokenizer.save_pretrained(str(where / "model"))
        small = quantised_graph(torch, transformers, quantization, where / "model", where)
        weights = model.out.weight.detach().numpy().T.astype(np.float32)
        bias = model.out.bias.detach().numpy().astype(np.float32)
        if rows is not None:
            from privacy_checklist.kg.encoder import TOKENIZER, Encoder

            vectors = Encoder(small, TOKENIZER).encode(rows.sentences)
            weights, bias = refit_head(vectors, rows.labels, (weights, bias), pair_weights(rows))
        digest = hashlib.sha256(small.read_bytes()).hexdigest()[:16]
        info = {**meta, "kinds": list(kinds), "scale": SCALE, "graph": digest}
        head = where / "head.npz"
        np.savez_compressed(head, weights=weights, bias=bias, meta=np.array(json.dumps(info)))
        exported = ConditionReader(small, head)
        if probes and (failures := probe_failures(exported)):
            raise ProbeFailure(failures)
        gap, same = _compare(exported, model, check)
        _replace({small: graph_out, head: head_out})
    return {"graph": str(graph_out), "bytes": graph_out.stat().st_size, "gap": round(gap, 4),
            "same": round(same, 4)}  # fmt: skip


def _replace(files: dict[Path, Path]) -> None:
    """Copy each file over its target, every copy made before any target is replaced."""
    import shutil

    for source, target in files.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target.with_suffix(".tmp"))
    for target in files.values():
        target.with_suffix(".tmp").replace(target)
