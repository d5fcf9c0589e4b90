"""Asking the running daemon's local server for a memory block (POST /api/v1/memory-block), so that a hook
need not open the search index itself. The standard library's HTTP client only: a hook starts for every
prompt, and its imports are its start-up time."""

from __future__ import annotations

import http.client
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from kbsync.app.recall import Block
    from kbsync.store.workspace import Workspace

TIMEOUT_S = 2.0


class NoDaemon(Exception):
    """No server runs for this workspace, or it refused the connection: the caller works in process."""


def memory_block(ws: Workspace, query: str, budget: int | None = None, session: str = "") -> Block:
    """The block from the daemon; NoDaemon when none listens; another error when one answered badly."""
    from kbsync.app.recall import Block
    from kbsync.app.web import api_token, running_server

    info = running_server(ws)
    if info is None:
        raise NoDaemon("no local server runs for this workspace")
    body: dict[str, Any] = {"query": query, "session": session, **({"budget": budget} if budget else {})}
    return Block.from_dict(_post(info.url, "/api/v1/memory-block", api_token(ws), body))


def _post(url: str, path: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=TIMEOUT_S)
    try:
        try:
            conn.request("POST", path, json.dumps(body).encode("utf-8"),
                         {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        except ConnectionRefusedError as exc:
            raise NoDaemon(str(exc)) from exc
        answer = conn.getresponse()
        data = answer.read()
    finally:
        conn.close()
    if answer.status != 200:
        raise RuntimeError(f"the local server answered {answer.status}: {data[:200]!r}")
    out = json.loads(data)
    if not isinstance(out, dict):
        raise RuntimeError("the local server's answer is not a JSON object")
    return out
