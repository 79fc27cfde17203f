"""A local OpenAI-compatible HTTP server for tests and benchmarks (stdlib only).

It answers `POST /v1/chat/completions` on 127.0.0.1 with whatever its `responder` returns for the
request body: a chat message dict (`{"content": ...}` or `{"tool_calls": [...]}`), or a
`Reply(status=..., body=..., headers=..., delay_s=...)` to script errors (429 with Retry-After,
500, malformed JSON, slowness). Every request body is kept in `requests` for assertions.

    with OpenAIServer(lambda body: {"content": "hi"}) as server:
        client = OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is (for malformed replies)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0

    def payload(self) -> bytes:
        return (self.body if isinstance(self.body, str) else json.dumps(self.body)).encode()


def answer(responder: Callable[[dict[str, Any]], Any], body: dict[str, Any]) -> Reply:
    """The responder's answer to a request body, a chat message wrapped as a completion."""
    out = responder(body)
    if isinstance(out, Reply):
        return out
    return Reply(body=completion(out, model=body.get("model", "test-model")))


def completion(
    message: dict[str, Any], model: str = "test-model", usage: tuple[int, int] = (10, 5)
) -> dict[str, Any]:
    msg = {"role": "assistant", "content": message.get("content")}
    finish = "stop"
    if message.get("tool_calls"):
        msg["tool_calls"] = [
            {
                "id": tc.get("id", f"call_{i}"),
                "type": "function",
                "function": {
                    "name": tc["name"],
                    "arguments": tc["arguments"]
                    if isinstance(tc["arguments"], str)
                    else json.dumps(tc["arguments"]),
                },
            }
            for i, tc in enumerate(message["tool_calls"])
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


class _Server(ThreadingHTTPServer):
    # Class attributes, because `listen()` runs in the constructor: set on the instance
    # afterwards, the backlog would stay at socketserver's 5, and a burst of concurrent clients
    # overflows the accept queue (the kernel then drops or resets the extra connections, which a
    # client sees as a read error on a connection it believed open).
    request_queue_size = 256
    daemon_threads = True


class OpenAIServer:
    def __init__(self, responder: Callable[[dict[str, Any]], Any], delay_s: float = 0.0):
        self.responder = responder
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body in one go: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))
                    return
                if server.delay_s:
                    time.sleep(server.delay_s)
                self._send(answer(server.responder, body))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.payload()
                self.send_response(reply.status)
                if "Content-Type" not in reply.headers:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
