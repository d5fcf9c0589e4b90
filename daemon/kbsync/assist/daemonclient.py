"""Asking the running daemon's local server for a memory block (POST /api/v1/memory-block), so that a hook
need not open the search index itself.

A hook starts for every prompt, and its imports are most of its start-up time, so the request is written
on a plain loopback socket (HTTP/1.1, `Connection: close`) rather than through http.client, whose email
parser alone costs more than the request. The answer is read to its end within TIMEOUT_S: a body with a
Content-Length or sent in chunks."""

from __future__ import annotations

import json
import socket
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kbsync.app.recall import Block
    from kbsync.app.workspace import Workspace

TIMEOUT_S = 2.0
MAX_ANSWER = 4 * 1024 * 1024


class NoDaemon(Exception):
    """No server runs for this workspace, or it refused the connection: the caller works in process."""


def memory_block(ws: Workspace, query: str, budget: int | None = None, session: str = "") -> Block:
    """The block from the daemon (which also remembers what it gave `session`); NoDaemon when none listens;
    another error when one answered badly or too late."""
    from kbsync.app.recall import Block
    from kbsync.app.web import api_token, running_server

    info = running_server(ws)
    if info is None:
        raise NoDaemon("no local server runs for this workspace")
    from kbsync.app.recall import MAX_QUERY

    body: dict[str, Any] = {"query": query[:MAX_QUERY], "session": session, **({"budget": budget} if budget else {})}
    return Block.from_dict(post(info.url, "/api/v1/memory-block", api_token(ws), body))


def post(url: str, path: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST `body` as JSON to the loopback server at `url`; its JSON object answer."""
    netloc = url.removeprefix("http://").rstrip("/")
    host, _, port = netloc.rpartition(":")
    data = json.dumps(body).encode("utf-8")
    request = (f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\nAuthorization: Bearer {token}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
               ).encode("ascii") + data
    deadline = time.monotonic() + TIMEOUT_S
    try:
        conn = socket.create_connection((host.strip("[]"), int(port)), timeout=TIMEOUT_S)
    except ConnectionRefusedError as exc:
        raise NoDaemon(str(exc)) from exc
    with conn:
        conn.sendall(request)
        raw = _read_all(conn, deadline)
    status, headers, payload = _parse(raw)
    if status != 200:
        raise RuntimeError(f"the local server answered {status}: {payload[:200]!r}")
    out = json.loads(_unchunked(payload) if headers.get("transfer-encoding") == "chunked" else payload)
    if not isinstance(out, dict):
        raise RuntimeError("the local server's answer is not a JSON object")
    return out


def _read_all(conn: socket.socket, deadline: float) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > MAX_ANSWER:
            raise RuntimeError("the local server's answer is too large")


def _parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, sep, payload = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise RuntimeError("the local server's answer is not HTTP")
    headers = {k.strip().lower(): v.strip().lower() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(parts[1]), headers, payload


def _unchunked(payload: bytes) -> bytes:
    out: list[bytes] = []
    rest = payload
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return b"".join(out)
        out.append(rest[:size])
        rest = rest[size + 2:]
