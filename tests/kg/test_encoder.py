"""The shipped sentence encoder (kg/encoder.py): all-MiniLM-L6-v2 with ONNX Runtime, no torch."""

from __future__ import annotations

import numpy as np
import pytest

from privacy_checklist.kg.encoder import DIM, Encoder, EncoderError, encoder
from tests.conftest import loaded_after


def test_vectors_are_unit_length_and_read_meaning() -> None:
    texts = [
        "The clinic faxed her chart to her employer without asking her.",
        "Without her permission, the practice sent her medical record to the company she works for.",
        "The cafeteria serves soup on Tuesdays.",
    ]
    vectors = encoder().encode(texts)
    assert vectors.shape == (3, DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    near, far = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert near > 0.5 and far < 0.2


def test_a_text_reads_the_same_alone_and_beside_others() -> None:
    """A text's vector depends on that text only (not on a longer one encoded with it)."""
    short = "PT c/o SOB x2 days, afeb."
    long = "The patient's daughter called the ward at night. " * 20
    alone = encoder().encode([short])[0]
    batched = encoder().encode([long, short])[1]
    assert float(alone @ batched) > 0.99999


def test_the_encoder_agrees_with_sentence_transformers() -> None:
    """The quantised graph stays close to the model it was exported from."""
    from privacy_checklist.kg.embeddings import model

    texts = ["Dr. Lee emailed the patient's medical records to a newspaper reporter."]
    ours = encoder().encode(texts)[0]
    theirs = np.asarray(model().encode(texts, normalize_embeddings=True))[0]
    assert float(ours @ theirs) > 0.97


def test_encoding_never_imports_torch() -> None:
    code = (
        "from privacy_checklist.kg.encoder import encoder\n"
        "encoder().encode(['a nurse told a reporter'])"
    )
    assert loaded_after(code, ("torch", "transformers", "sentence_transformers")) == [False] * 3


def test_a_missing_graph_is_one_clear_error(tmp_path) -> None:
    with pytest.raises(EncoderError, match="--export"):
        Encoder(tmp_path / "none.onnx")
