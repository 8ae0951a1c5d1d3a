"""A small OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

``ScriptedLLM(script)`` serves ``POST /v1/chat/completions``. ``script(request, count)`` gets the
request's JSON body and how many times the same last message has been seen, and returns either
a string (the answer), or ``("status", code[, message])``, ``("sleep", seconds, answer)``, or ``("empty",)``.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privacy_checklist.reasoning.llm.client import LLMClient, LLMConfig

Script = Callable[[dict[str, Any], int], Any]


class ScriptedLLM:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.seen: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                key = body["messages"][-1]["content"]
                with outer.lock:
                    outer.seen[key] += 1
                    count = outer.seen[key]
                    outer.requests.append(body)
                action = outer.script(body, count)
                if isinstance(action, tuple) and action[0] == "status":
                    self._send(
                        action[1],
                        {
                            "error": {
                                "message": (
                                    action[2] if len(action) > 2 else f"scripted {action[1]}"
                                ),
                                "type": "scripted",
                                "code": action[1],
                            }
                        },
                    )
                    return
                if isinstance(action, tuple) and action[0] == "sleep":
                    time.sleep(action[1])
                    action = action[2]
                content = "" if isinstance(action, tuple) and action[0] == "empty" else action
                self._send(
                    200,
                    {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content},
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def client_for(server: ScriptedLLM, tmp_path: Path, **kwargs: Any) -> LLMClient:
    """An LLM client for ``server``: its own disk cache under ``tmp_path``, no backoff wait."""
    config = LLMConfig(
        base_url=server.base_url,
        model="scripted-1",
        cache=tmp_path / "cache.sqlite",
        backoff=0.0,
        **kwargs,
    )
    return LLMClient(config, sleep=lambda _s: None)


@contextmanager
def serve(server: ScriptedLLM, script: Any) -> Iterator[ScriptedLLM]:
    """``server`` answering from ``script``, its counts reset (one server serves a module:
    starting and stopping one costs half a second)."""
    with server.lock:
        server.script = script
        server.seen.clear()
        server.requests.clear()
    yield server
