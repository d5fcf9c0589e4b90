"""The streamable-HTTP app the daemon's web server mounts: DNS-rebinding protection is on, so only the
loopback Host and Origin values are answered."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

from helpers.mcp import serving
from kbsync.app.workspace import open_workspace
from kbsync.mcp.server import http_app

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


def _post(url: str, headers: dict[str, str]) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", "/mcp", body=INIT, headers={"Content-Type": "application/json",
                                                          "Accept": "application/json, text/event-stream", **headers})
        status = conn.getresponse().status
    finally:
        conn.close()
    return status


def test_only_loopback_host_and_origin_are_answered(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)
    with serving(http_app(lambda: ws).app) as url:
        port = urlsplit(url).port
        assert _post(url, {"Host": f"127.0.0.1:{port}"}) == 200
        assert _post(url, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) == 200
        assert _post(url, {"Host": f"attacker.example:{port}"}) == 421
        assert _post(url, {"Host": f"127.0.0.1:{port}", "Origin": "http://attacker.example"}) == 403
