"""The static sentence encoder (kg/static.py): a table distilled from the shipped MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from privacy_checklist.kg.encoder import EncoderError, encoder
from privacy_checklist.kg.static import DIM, StaticEncoder, quantise, static_encoder
from tests.conftest import loaded_after

TEXTS = [
    "The clinic faxed her chart to her employer without asking her.",
    "Without her permission, the practice sent her medical record to the company she works for.",
    "The cafeteria serves soup on Tuesdays.",
    "Her divorce and custody fight came up in the session.",
]


def test_vectors_are_unit_length_and_read_meaning() -> None:
    vectors = static_encoder().encode(TEXTS)
    assert vectors.shape == (4, DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2


def test_it_ranks_pairs_of_sentences_as_the_transformer_does() -> None:
    """The student keeps the teacher's sense of which sentences are near: over every pair of
    the texts, the two encoders' similarities move together."""
    ours, theirs = static_encoder().encode(TEXTS), encoder().encode(TEXTS)
    pairs = [(i, j) for i in range(len(TEXTS)) for j in range(i + 1, len(TEXTS))]
    a = [float(ours[i] @ ours[j]) for i, j in pairs]
    b = [float(theirs[i] @ theirs[j]) for i, j in pairs]
    assert float(np.corrcoef(a, b)[0, 1]) > 0.8


def test_a_text_with_no_known_piece_is_zeros_and_each_text_reads_alone() -> None:
    vectors = static_encoder().encode(["", "   ", TEXTS[0]])
    assert not vectors[0].any() and not vectors[1].any()
    assert float(vectors[2] @ static_encoder().encode([TEXTS[0]])[0]) > 0.99999


def test_encoding_needs_neither_torch_nor_onnxruntime() -> None:
    code = (
        "from privacy_checklist.kg.static import static_encoder\n"
        "static_encoder().encode(['a nurse told a reporter'])"
    )
    assert loaded_after(code, ("torch", "onnxruntime", "model2vec")) == [False] * 3


def test_quantised_rows_keep_their_values() -> None:
    rows = np.array([[0.5, -0.25, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    q, scales = quantise(rows)
    assert q.dtype == np.int8 and np.allclose(q * scales[:, None], rows, atol=0.5 / 127)
    assert not (q[1] * scales[1]).any()


def test_a_missing_or_damaged_table_is_one_clear_error(tmp_path) -> None:
    with pytest.raises(EncoderError, match="--distill"):
        StaticEncoder(tmp_path / "none.npz")
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a table")
    with pytest.raises(EncoderError, match="cannot be read"):
        StaticEncoder(broken)
