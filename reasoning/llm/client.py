"""The LLM layer: any OpenAI-compatible endpoint, with a disk cache, retries and a limit.

Configuration comes from arguments or the environment (``PCHECK_LLM_BASE_URL``,
``PCHECK_LLM_MODEL``, ``PCHECK_LLM_API_KEY`` or ``OPENAI_API_KEY``), checked when it is made (an
http(s) URL, a positive timeout). Requests use temperature 0; rate limits (429), server errors
(5xx), timeouts and dropped connections are retried with exponential backoff; other errors are
not, nor is a connection that cannot be made at all (refused, unknown host): one try, so a dead
endpoint fails at once. A 200 whose body is not a chat completion (an HTML page, broken JSON) is
a failed request too, never an answer. Every answer is cached on disk (SQLite) under a key
made of the endpoint, the model, the parameters and the messages, so a rerun costs nothing and
an interrupted run resumes. :meth:`LLMClient.map` runs many requests with a concurrency limit
and records, for each, the answer or the reason it failed; one failure never loses the others.

What a method needs of a client is :class:`Client`; :func:`build_client` makes one, for an
endpoint (:class:`LLMClient`) or the local backend (:mod:`privacy_checklist.reasoning.llm.local`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

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
    #: send the answer's JSON schema (``response_format``) when a request has one; an endpoint
    #: that refuses it is asked without it, and remembered in the cache
    schema: bool = True
    cache: Path | None = field(default_factory=default_cache_path)
    #: the most bytes read of one response: a larger body is an error, not read whole
    max_answer_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        problem = url_problem(self.base_url)
        if problem:
            raise LLMConfigError(
                f"--llm-base-url {self.base_url!r} (or PCHECK_LLM_BASE_URL): {problem}; give the "
                "endpoint's URL, e.g. http://localhost:8000/v1"
            )
        problem = timeout_problem(self.timeout)
        if problem:
            raise LLMConfigError(f"--llm-timeout {self.timeout!r}: {problem}")
        if self.max_retries < 0:
            raise LLMConfigError(f"--llm-retries {self.max_retries}: must be 0 or more")
        if self.concurrency < 1:
            raise LLMConfigError(f"--concurrency {self.concurrency}: must be at least 1")

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


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an OpenAI-compatible endpoint, or None."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # raises for a port that is not a number
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "not an http:// or https:// URL"
    if not parts.hostname:
        return "no host in it"
    if port == 0:
        return "port 0"
    return None


def timeout_problem(seconds: float) -> str | None:
    """Why ``seconds`` cannot be a request timeout, or None."""
    if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds <= 0:
        return "must be a number of seconds above 0"
    return None


URL_HINT = "an OpenAI-compatible API's URL usually ends in /v1"


class NotACompletion(ValueError):
    """The endpoint answered 200 with something other than a chat completion."""


def answer_text(response: Any) -> str:
    """The text of a chat completion's first choice ('' when the model said nothing).

    Raises:
        NotACompletion: the response is not a chat completion (the SDK hands back the body as
        text or a list when it is not a completion object).
    """
    if isinstance(response, str | bytes):
        shown = " ".join(str(response if isinstance(response, str) else response[:200]).split())
        html = shown.lower().startswith(("<!doctype", "<html"))
        raise NotACompletion(
            f"the answer is {'an HTML page' if html else 'text'}, not a chat completion "
            f"({shown[:60]!r}{'…' if len(shown) > 60 else ''}; {URL_HINT})"
        )
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise NotACompletion(
            f"the answer is a {type(response).__name__} but not a chat completion (no choices; "
            f"{URL_HINT})"
        )
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None) if message is not None else None
    if content is not None and not isinstance(content, str):
        raise NotACompletion(f"not a chat completion (its message is not text; {URL_HINT})")
    return content or ""


class AnswerTooLarge(Exception):
    """The endpoint's response is larger than the client reads (``max_answer_bytes``)."""


def capped_transport(limit: int, httpx: Any) -> Any:
    """A transport of ``httpx`` (the HTTP package the OpenAI client is built on: ``httpx`` or
    its successor ``httpx2``) that stops reading a response at ``limit`` bytes: a body said or
    found to be larger raises :class:`AnswerTooLarge` (never held whole in memory)."""

    def too_large(size: str) -> AnswerTooLarge:
        return AnswerTooLarge(
            f"the endpoint's answer is larger than {limit:,} bytes ({size}); not read: is "
            "--llm-base-url a chat-completions endpoint?"
        )

    class Capped(httpx.SyncByteStream):  # type: ignore[misc]  # httpx or httpx2, as found
        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __iter__(self) -> Iterator[bytes]:
            read = 0
            for chunk in self.stream:
                read += len(chunk)
                if read > limit:
                    raise too_large(f"more than {read:,} read")
                yield chunk

        def close(self) -> None:
            self.stream.close()

    class Transport(httpx.HTTPTransport):  # type: ignore[misc]
        def handle_request(self, request: Any) -> Any:
            response = super().handle_request(request)
            said = response.headers.get("content-length", "")
            if said.isdigit() and int(said) > limit:
                response.close()
                raise too_large(f"{int(said):,} said")
            response.stream = Capped(response.stream)
            return response

    return Transport()


def _connect_failure(exc: BaseException) -> str | None:
    """The reason when a connection could not be made at all (refused, unknown host), else None:
    such a failure is not retried."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    for cause in chain:
        if isinstance(cause, AnswerTooLarge):
            return str(cause)
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "cannot connect (Connection refused: is the server running, on that port?)"
    for cause in chain:
        if type(cause).__name__ == "ConnectError":  # httpx: unknown host, TLS ...
            return f"cannot connect: {cause}"
    return None


HINTS = {
    401: " (check the API key: PCHECK_LLM_API_KEY or OPENAI_API_KEY)",
    403: " (check the API key: PCHECK_LLM_API_KEY or OPENAI_API_KEY)",
    404: " (check --llm-base-url, usually ending in /v1, and --llm-model)",
}


_SCHEMA_REFUSED = "the endpoint refused the answer's schema"
_SCHEMA_WORDS = re.compile(
    r"response_format|json_schema|schema|grammar|guided|structured output", re.I
)


def _refuses_schema(status: int, said: str) -> bool:
    """An HTTP error that refuses the ``response_format`` rather than the request (400, 415,
    422 or 501 naming it): the request is asked again without it."""
    return status in (400, 415, 422, 501) and bool(_SCHEMA_WORDS.search(said))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One request's result: the answer, or why it failed; and whether it came from the cache."""

    key: str
    text: str | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    #: the answer's schema: "sent", "refused" (the endpoint would not take it, now or before),
    #: "off" (turned off), "" (the request had none)
    schema: str = ""


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

    def refuses(self, endpoint: str, what: str) -> bool:
        """Whether ``endpoint`` (URL and model) refused ``what`` ("schema") before."""
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS refusals (endpoint TEXT, what TEXT, reason TEXT, "
                "at REAL NOT NULL, PRIMARY KEY (endpoint, what))"
            )
            row = db.execute(
                "SELECT 1 FROM refusals WHERE endpoint = ? AND what = ?", (endpoint, what)
            ).fetchone()
        return row is not None

    def refused(self, endpoint: str, what: str, reason: str) -> None:
        """Remember that ``endpoint`` refused ``what``."""
        self.refuses(endpoint, what)  # the table
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO refusals VALUES (?, ?, ?, ?)",
                (endpoint, what, reason[:500], time.time()),
            )


def cached_outcome(cache: DiskCache | None, key: str, *, use_cache: bool = True) -> Outcome | None:
    """The cached answer to the request ``key`` as an outcome, or None."""
    if not use_cache or cache is None:
        return None
    hit = cache.get(key)
    return Outcome(key=key, text=hit, cached=True) if hit is not None else None


#: What needs the ``llm`` extra, as its error message says.
LLM_NEEDS = "asking an LLM"


def _openai_module() -> Any:
    """The ``openai`` package (the ``llm`` extra)."""
    from privacy_checklist.kg.extras import require

    return require("openai", "llm", LLM_NEEDS)


class LLMClient:
    """Chat completions against an OpenAI-compatible endpoint.

    Raises:
        MissingExtra: (when made) the ``llm`` extra, the OpenAI client, is not installed.
    """

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        from privacy_checklist.kg.extras import check

        check("llm", LLM_NEEDS)  # found now, imported at the first request
        self.config = config
        self.cache = DiskCache(config.cache) if config.cache is not None else None
        self._sleep = sleep
        self._client: Any = None
        self._refuses_schema = False

    #: its requests can carry an answer's JSON schema (``response_format``)
    takes_schema = True

    @property
    def name(self) -> str:
        return f"llm:{self.config.model}"

    def _openai(self) -> Any:
        if self._client is None:
            OpenAI = _openai_module().OpenAI

            module = _openai_module()
            base = next(c for c in module.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
            httpx = importlib.import_module(base.__module__.split(".")[0])
            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key,
                timeout=self.config.timeout,
                max_retries=0,
                # the client's own defaults (redirects, pool limits), reading at most so much
                http_client=module.DefaultHttpxClient(
                    transport=capped_transport(self.config.max_answer_bytes, httpx),
                    timeout=self.config.timeout,
                ),
            )
        return self._client

    def key(self, messages: Sequence[Message], schema: Mapping[str, Any] | None = None) -> str:
        fields: dict[str, Any] = {
            "endpoint": self.config.base_url,
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "json_mode": self.config.json_mode,
            "messages": list(messages),
        }
        if schema is not None:
            fields["schema"] = schema
        return request_key(fields)

    @property
    def endpoint(self) -> str:
        return f"{self.config.base_url} {self.config.model}"

    def _schema_refused(self) -> bool:
        return self._refuses_schema or (
            self.cache is not None and self.cache.refuses(self.endpoint, "schema")
        )

    def complete(
        self,
        messages: Sequence[Message],
        *,
        use_cache: bool = True,
        schema: Mapping[str, Any] | None = None,
    ) -> Outcome:
        """One chat completion; never raises for a failed request (see :class:`Outcome`).

        ``schema``: the answer's JSON schema, sent as ``response_format`` (``json_schema``)
        unless the config turns it off or the endpoint refused it before (then the request goes
        without it; :attr:`Outcome.schema` says which).

        Raises:
            MissingExtra: the answer is not cached and the ``llm`` extra is not installed.
        """
        state = ""
        if schema is not None:
            state = "off" if not self.config.schema else "sent"
            if state == "sent" and self._schema_refused():
                state = "refused"
        sent = schema if state == "sent" else None
        key = self.key(messages, sent)
        hit = cached_outcome(self.cache, key, use_cache=use_cache)
        if hit is not None:
            return replace(hit, schema=state)
        outcome = self._ask(messages, key, sent)
        if sent is not None and outcome.error == _SCHEMA_REFUSED:
            # the endpoint will not take a schema: remember it, ask again without
            self._refuses_schema = True
            if self.cache is not None:
                self.cache.refused(self.endpoint, "schema", outcome.text or "")
            key = self.key(messages, None)
            hit = cached_outcome(self.cache, key, use_cache=use_cache)
            if hit is not None:
                return replace(hit, schema="refused")
            return replace(self._ask(messages, key, None), schema="refused")
        return replace(outcome, schema=state)

    def _ask(
        self, messages: Sequence[Message], key: str, schema: Mapping[str, Any] | None
    ) -> Outcome:
        openai = _openai_module()
        last = "no attempt"
        for attempt in range(1, self.config.max_retries + 2):
            try:
                kwargs: dict[str, Any] = {}
                if schema is not None:
                    kwargs["response_format"] = {
                        "type": "json_schema",
                        "json_schema": {"name": "answer", "schema": dict(schema)},
                    }
                elif self.config.json_mode:
                    kwargs["response_format"] = {"type": "json_object"}
                response = self._openai().chat.completions.create(
                    model=self.config.model,
                    messages=list(messages),
                    temperature=self.config.temperature,
                    max_tokens=self.config.max_tokens,
                    **kwargs,
                )
                text = answer_text(response)
                if not text.strip():
                    return Outcome(key=key, text=None, error="empty answer", attempts=attempt)
                if self.cache is not None:
                    self.cache.put(key, self.config.model, text)
                return Outcome(key=key, text=text, attempts=attempt)
            except openai.APITimeoutError as exc:
                last = f"{type(exc).__name__}: {exc.message}"
            except openai.APIConnectionError as exc:
                refused = _connect_failure(exc)
                if refused is not None:
                    return Outcome(key=key, text=None, error=refused, attempts=attempt)
                last = f"{type(exc).__name__}: {exc.message}"
            except openai.APIStatusError as exc:
                said = f"HTTP {exc.status_code}: {exc.message}"
                if schema is not None and _refuses_schema(exc.status_code, said):
                    # the text carries the server's words, for the record of the refusal
                    return Outcome(key=key, text=said, error=_SCHEMA_REFUSED, attempts=attempt)
                if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                    last = said
                else:
                    hint = HINTS.get(exc.status_code, "")
                    return Outcome(key=key, text=None, error=said + hint, attempts=attempt)
            except (NotACompletion, AnswerTooLarge) as exc:
                return Outcome(key=key, text=None, error=str(exc), attempts=attempt)
            except json.JSONDecodeError as exc:
                return Outcome(
                    key=key,
                    text=None,
                    error=f"the answer is not JSON, not a chat completion ({exc}; {URL_HINT})",
                    attempts=attempt,
                )
            except (openai.OpenAIError, ValueError, KeyError, IndexError, TypeError) as exc:
                return Outcome(
                    key=key, text=None, error=f"{type(exc).__name__}: {exc}", attempts=attempt
                )
            if attempt <= self.config.max_retries:
                self._sleep(self.config.backoff * 2 ** (attempt - 1))
        attempts = self.config.max_retries + 1
        return Outcome(
            key=key,
            text=None,
            error=last if attempts == 1 else f"gave up after {attempts} attempts ({last})",
            attempts=attempts,
        )

    def map(
        self,
        requests: Sequence[Sequence[Message]],
        progress: Callable[[Outcome], None] | None = None,
        *,
        schema: Mapping[str, Any] | None = None,
    ) -> list[Outcome]:
        """Many completions, at most ``concurrency`` at once, in the order given."""
        results: list[Outcome | None] = [None] * len(requests)

        def run(index: int) -> None:
            results[index] = self.complete(requests[index], schema=schema)
            if progress is not None:
                progress(results[index])  # type: ignore[arg-type]

        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            list(pool.map(run, range(len(requests))))
        return [r for r in results if r is not None]


class Client(Protocol):
    """What a method needs of an LLM: :class:`LLMClient`, or a local backend
    (:class:`~privacy_checklist.reasoning.llm.local.LocalClient`) with the same two calls."""

    def complete(self, messages: Sequence[Message]) -> Any: ...

    def map(self, requests: Sequence[Sequence[Message]]) -> list[Any]: ...


def build_client(
    backend: str = "openai",
    base_url: str | None = None,
    model: str | None = None,
    **config: Any,
) -> Client:
    """An LLM client: ``openai`` (any OpenAI-compatible endpoint, :class:`LLMClient`) or
    ``local`` (``privacy_checklist.reasoning.llm.local.LocalClient``, when installed).

    Raises:
        LLMConfigError: not configured, or the local backend is missing or cannot run (its
        ``problem()``).
    """
    if backend == "local":
        try:
            from privacy_checklist.reasoning.llm.local import LocalClient
        except ImportError as exc:
            raise LLMConfigError(
                "--llm-backend local needs privacy_checklist.reasoning.llm.local, which cannot be "
                f"imported here ({exc}); use --llm-backend openai with --llm-base-url and "
                "--llm-model"
            ) from exc
        client = LocalClient.from_options(model=model)
        problem = client.problem()
        if problem:
            raise LLMConfigError(f"--llm-backend local: {problem}")
        return client
    if backend != "openai":
        raise LLMConfigError(f"unknown LLM backend {backend!r}; choose openai or local")
    return LLMClient(LLMConfig.from_env(base_url, model, **config))


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
