"""The MCP server's streamable-HTTP app at /mcp on the local web server (`kbsync web serve`, and so the
daemon's server): behind the same token, Host and Origin checks as the API, driven by the SDK's client."""

from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from helpers.mcp import data
from helpers.web import WebServer


def test_mcp_needs_the_token(server: WebServer) -> None:
    answer = server.http.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10,
                              headers={"Accept": "application/json, text/event-stream"})
    assert answer.status_code == 401


def test_mcp_refuses_a_foreign_host(server: WebServer) -> None:
    answer = server.http.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10,
                              headers={"Authorization": f"Bearer {server.token}", "Host": "evil.example:80",
                                       "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 403


def test_an_assistant_reaches_the_tools_at_mcp_with_the_token(server: WebServer) -> None:
    async def run() -> tuple[set[str], dict[str, object]]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                status = await client.call_tool("status", {})
                return names, dict(data(status))

    names, status = anyio.run(run)
    assert {"search", "get_context", "save_session", "remember"} <= names
    assert status.get("workspace") == str(server.root)
