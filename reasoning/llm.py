"""The LLM layer: any OpenAI-compatible endpoint, with a disk cache, retries and a limit.

Configuration comes from arguments or the environment (``PCHECK_LLM_BASE_URL``,
``PCHECK_LLM_MODEL``, ``PCHECK_LLM_API_KEY`` or ``OPENAI_API_KEY``). Requests use temperature 0;
rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
exponential backoff; other errors are not. Every answer is cached on disk (SQLite) under a key
made of the endpoint, the model, the parameters and the messages, so a rerun costs nothing and
an interrupted run resumes. :meth:`LLMClient.map` runs many requests with a concurrency limit
and records, for each, the answer or the reason it failed; one failure never loses the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Message = dict[str, str]


class LLMError(Exception):
    """A request failed for good (after its retries); the message says why."""


class LLMConfigError(LLMError):
    """The endpoint or model is not configured."""


def default_cache_path() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "privacy-checklist" / "llm-cache.sqlite"


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to ask."""

    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 1.0
    concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int = 1024
    json_mode: bool = False
    cache: Path | None = field(default_factory=default_cache_path)

    @classmethod
    def from_env(
        cls, base_url: str | None = None, model: str | None = None, **kwargs: Any
    ) -> LLMConfig:
        """Arguments first, then ``PCHECK_LLM_*`` (and ``OPENAI_API_KEY``)."""
        base_url = (
            base_url or os.environ.get("PCHECK_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        )
        model = model or os.environ.get("PCHECK_LLM_MODEL")
        if not base_url or not model:
            raise LLMConfigError(
                "no LLM configured: pass --llm-base-url URL and --llm-model NAME (or set "
                "PCHECK_LLM_BASE_URL and PCHECK_LLM_MODEL); any OpenAI-compatible endpoint works"
            )
        key = (
            kwargs.pop("api_key", None)
            or os.environ.get("PCHECK_LLM_API_KEY")
            or os.environ.get("OPENAI_API_KEY", "not-needed")
        )
        return cls(base_url=base_url.rstrip("/"), model=model, api_key=key, **kwargs)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One request's result: the answer, or why it failed; and whether it came from the cache."""

    key: str
    text: str | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0


def request_key(fields: dict[str, Any]) -> str:
    """The cache key of a request: a hash of everything that shapes its answer."""
    payload = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DiskCache:
    """Answers by request key, in SQLite (safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._local = threading.local()
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, model TEXT, "
                "answer TEXT NOT NULL, at REAL NOT NULL)"
            )

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            self._local.db = db
        return db

    def get(self, key: str) -> str | None:
        row = self._db().execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, answer: str) -> None:
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                (key, model, answer, time.time()),
            )


def cached_outcome(cache: DiskCache | None, key: str, use_cache: bool = True) -> Outcome | None:
    """The cached answer to the request ``key`` as an outcome, or None."""
    if not use_cache or cache is None:
        return None
    hit = cache.get(key)
    return Outcome(key, hit, cached=True) if hit is not None else None


class LLMClient:
    """Chat completions against an OpenAI-compatible endpoint."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.cache = DiskCache(config.cache) if config.cache is not None else None
        self._sleep = sleep
        self._client: Any = None

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def _openai(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key,
                timeout=self.config.timeout,
                max_retries=0,
            )
        return self._client

    def key(self, messages: Sequence[Message]) -> str:
        return request_key(
            {
                "endpoint": self.config.base_url,
                "model": self.config.model,
                "temperature": self.config.temperature,
                "max_tokens": self.config.max_tokens,
                "json_mode": self.config.json_mode,
                "messages": list(messages),
            }
        )

    def complete(self, messages: Sequence[Message], use_cache: bool = True) -> Outcome:
        """One chat completion; never raises for a failed request (see :class:`Outcome`)."""
        import openai

        key = self.key(messages)
        hit = cached_outcome(self.cache, key, use_cache)
        if hit is not None:
            return hit
        last = "no attempt"
        for attempt in range(1, self.config.max_retries + 2):
            try:
                kwargs: dict[str, Any] = {}
                if self.config.json_mode:
                    kwargs["response_format"] = {"type": "json_object"}
                response = self._openai().chat.completions.create(
                    model=self.config.model,
                    messages=list(messages),
                    temperature=self.config.temperature,
                    max_tokens=self.config.max_tokens,
                    **kwargs,
                )
                text = (response.choices[0].message.content or "") if response.choices else ""
                if not text.strip():
                    return Outcome(key, None, "empty answer", attempts=attempt)
                if self.cache is not None:
                    self.cache.put(key, self.config.model, text)
                return Outcome(key, text, attempts=attempt)
            except (
                openai.RateLimitError,
                openai.APITimeoutError,
                openai.APIConnectionError,
                openai.InternalServerError,
            ) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
            except openai.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                    last = f"HTTP {exc.status_code}: {exc.message}"
                else:
                    return Outcome(
                        key, None, f"HTTP {exc.status_code}: {exc.message}", attempts=attempt
                    )
            except (openai.OpenAIError, ValueError, KeyError, IndexError) as exc:
                return Outcome(key, None, f"{type(exc).__name__}: {exc}", attempts=attempt)
            if attempt <= self.config.max_retries:
                self._sleep(self.config.backoff * 2 ** (attempt - 1))
        return Outcome(
            key,
            None,
            f"gave up after {self.config.max_retries + 1} attempts ({last})",
            attempts=self.config.max_retries + 1,
        )

    def map(
        self,
        requests: Sequence[Sequence[Message]],
        progress: Callable[[Outcome], None] | None = None,
    ) -> list[Outcome]:
        """Many completions, at most ``concurrency`` at once, in the order given."""
        results: list[Outcome | None] = [None] * len(requests)

        def run(index: int) -> None:
            results[index] = self.complete(requests[index])
            if progress is not None:
                progress(results[index])  # type: ignore[arg-type]

        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            list(pool.map(run, range(len(requests))))
        return [r for r in results if r is not None]


def parse_json_answer(text: str) -> dict[str, Any]:
    """The first JSON object in a model's answer (bare or in a code fence).

    Raises:
        ValueError: the answer holds no JSON object.
    """
    for data in json_objects(text):
        return data
    raise ValueError("no JSON object in the answer")


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The top-level JSON objects of a text, in order (an object's inner braces are skipped)."""
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index >= 0:
        try:
            data, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(data, dict):
            yield data
        index = text.find("{", end)
