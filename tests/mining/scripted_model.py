"""The scripted OpenAI-compatible server behind the fixture generators of `otel_exports/` and
`gateway_logs/` (each request to it answered by a reply function, as a chat completion), and
the support scenario they play: two customers asking for a refund, the agent's tools and what
they answer."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SAYS = (
    "Hi, the blanket in order W1001 arrived broken, refund it please.",
    "Hello, the lamp from order W1002 does not work. Please refund it.",
)
YES = "Yes please."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": about,
            "parameters": {"type": "object", "properties": props, "required": list(props)},
        },
    }
    for name, about, props in (
        ("get_order", "Look up an order", {"order_id": {"type": "string"}}),
        (
            "refund_items",
            "Refund items of an order",
            {"order_id": {"type": "string"}, "item_ids": {"type": "array"}},
        ),
    )
]


def result(name: str, args: dict) -> dict:
    item = "I" + args["order_id"][-1]
    if name == "get_order":
        return {"id": args["order_id"], "status": "delivered", "items": [{"item_id": item}]}
    return {"refund_id": "R" + item[1:], "amount": 64.75}


def refund_step(request: dict, *, two_turns: bool, confirm_first: bool) -> tuple:
    """The scripted support agent's next step on `request`: a tool call (its function, name and
    arguments) and no words, or no call and its words. It looks the order up, refunds its item
    and says it is done; `two_turns`, it asks "Shall I?" and waits for the customer's yes first,
    before the lookup (`confirm_first`) or after it."""
    said = [m["content"] for m in request["messages"] if m["role"] == "user"]
    order = re.search(r"W\d+", said[0]).group(0)
    results = sum(1 for m in request["messages"] if m["role"] == "tool")
    agreed = said[-1] == YES or not two_turns
    if results == 0 and (agreed or not confirm_first):
        return {"name": "get_order", "arguments": json.dumps({"order_id": order})}, None
    if results == 1 and (agreed or confirm_first):
        args = {"order_id": order, "item_ids": ["I" + order[-1]]}
        return {"name": "refund_items", "arguments": json.dumps(args)}, None
    return None, "Done, refunded." if results == 2 else "I can refund it. Shall I?"


def completion(request: dict, n: int, message: dict, call: dict | None) -> dict:
    """The `n`th answer of the server: `message` (with `call` as its tool call, if any)."""
    if call is not None:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": call}]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_795_000_000,
        "model": request["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if call is not None else "stop",
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def serve(reply: Callable[[dict, int], dict]) -> ThreadingHTTPServer:
    """A server on a free local port, answering its `n`th request with `reply(request, n)`."""
    served = 0

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            nonlocal served
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            served += 1
            body = json.dumps(reply(request, served)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
