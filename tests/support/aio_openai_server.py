"""The local OpenAI-compatible server of `openai_server`, served by aiohttp on an event loop of
its own thread instead of a thread per connection.

Same contract (`responder`, `Reply`, `delay_s`, `base_url`, a context manager), but the fixed delay
is an `await asyncio.sleep` rather than a sleeping thread, so hundreds of requests in flight cost
the server next to nothing: what a benchmark measures is then the client, not the server's GIL.
Only the number of requests is kept (`count`), not their bodies, so a long benchmark does not
grow the server's memory.

    with AioOpenAIServer(lambda body: {"content": "hi"}, delay_s=0.1) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.support.openai_server import answer


class AioOpenAIServer:
    def __init__(self, responder: Callable[[dict[str, Any]], Any], delay_s: float = 0.0):
        self.responder = responder
        self.delay_s = delay_s
        self.count = 0
        self.base_url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.count += 1
        body = json.loads(await request.read() or b"{}")
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        out = answer(self.responder, body)
        if out.delay_s:
            await asyncio.sleep(out.delay_s)
        return web.Response(
            status=out.status,
            body=out.payload(),
            content_type="application/json",
            charset="utf-8",
            headers=out.headers,
        )

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        host, port = self._runner.addresses[0][:2]  # the port the OS chose
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> AioOpenAIServer:
        self._thread.start()
        self.base_url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
