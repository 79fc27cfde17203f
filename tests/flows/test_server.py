"""`LocalPrefectServer` refuses a port something already listens on (no server is started), and
stops the server it started when its start-up is interrupted (Ctrl-C)."""

from __future__ import annotations

import socket

import pytest

from casemill.errors import UserError
from casemill.flows.server import LocalPrefectServer, free_port, port_in_use


def test_a_taken_port_is_refused_before_anything_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = LocalPrefectServer(tmp_path / "home", port=port, startup_timeout_s=5)
        with pytest.raises(UserError) as raised:
            server.start()
    message = str(raised.value)
    assert f"port {port} on 127.0.0.1 is already in use" in message
    assert "--port" in message and "PREFECT_API_URL" in message
    assert server.process is None


def test_port_in_use_tells_a_listening_port_from_a_free_one():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert port_in_use(port)
    assert not port_in_use(port)


def test_ctrl_c_while_the_server_starts_stops_it(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("urllib.request.urlopen", interrupted)  # the first health check
    server = LocalPrefectServer(tmp_path / "home", port=free_port(), ui=False)
    try:
        with pytest.raises(KeyboardInterrupt):
            server.start()
        assert server.process is not None
        alive = server.process.poll() is None
    finally:
        server.stop()
    assert not alive, "the Prefect server outlived the interrupted start"
