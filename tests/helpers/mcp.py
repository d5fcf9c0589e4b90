"""Driving `kbsync mcp` with the MCP SDK's own client: over stdio (the real command as a subprocess) or
over streamable HTTP (the app served by uvicorn on 127.0.0.1)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from helpers.web import free_port


def stdio_params(ws: Path) -> StdioServerParameters:
    """`python -m kbsync -w WS mcp`, with the git identity and home of the test."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("GIT_") or k in ("HOME", "PATH")}
    return StdioServerParameters(command=sys.executable, args=["-m", "kbsync", "-w", str(ws), "mcp"], env=keep)


@contextlib.asynccontextmanager
async def stdio(ws: Path) -> AsyncIterator[Client]:
    async with Client(stdio_params(ws)) as client:
        yield client


@contextlib.asynccontextmanager
async def http(root: Path) -> AsyncIterator[Client]:
    """A client of the streamable-HTTP app mounted as the daemon's web server mounts it, served by uvicorn on
    127.0.0.1."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from kbsync.app.workspace import open_workspace
    from kbsync.mcp.server import http_app

    ws = open_workspace(str(root), None)
    door = http_app(lambda: ws)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with door.lifespan():
            yield

    with serving(Starlette(routes=[Mount("/", app=door.app)], lifespan=lifespan)) as url:
        async with Client(f"{url}/mcp") as client:
            yield client


def data(result: CallToolResult) -> Any:
    """The tool's JSON answer; AssertionError with its text when the call failed."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, text
    return json.loads(text)


def error(result: CallToolResult) -> str:
    """The error text of a call that must fail."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error, f"expected an error, got {text}"
    return text


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
