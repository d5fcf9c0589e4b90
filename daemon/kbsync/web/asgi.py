"""The ASGI application: the API under /api/v1, its OpenAPI 3.1 document at /api/openapi.json, the
login link, the pages (kbsync.web.pages: / leads to /board), every part behind the guard (kbsync.web.guard).

Other apps may be mounted beside the API (`mounts`: the MCP server's streamable-HTTP app at /mcp);
they sit behind the same guard, so the same token, Host and Origin rules hold for them.
"""

from __future__ import annotations

from typing import Callable, Sequence

from fastapi import APIRouter, FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp

from kbsync import __version__
from kbsync.app.web import TokenCache
from kbsync.app.workspace import Workspace
from kbsync.web import api_board, api_conflicts, api_memory, api_sessions, api_workspace, problems
from kbsync.web.describe import DescribedApi
from kbsync.web.guard import Guard
from kbsync.web.pages import site

API_PREFIX = "/api/v1"
OPENAPI_PATH = "/api/openapi.json"
DESCRIPTION = ("The local HTTP API of a kbsync workspace: every endpoint calls the function the command line "
               "calls for the same action. Authenticate with `Authorization: Bearer <token>` (`kbsync web "
               "token`); send JSON with `Content-Type: application/json`. See docs/http-api.md.")


def _api() -> APIRouter:
    api = APIRouter(prefix=API_PREFIX, responses=problems.ERROR_RESPONSES)
    for part in (api_workspace, api_sessions, api_memory, api_board, api_conflicts):
        api.include_router(part.router)
    return api


def build(current: Callable[[], Workspace], *, base_url: str, mounts: Sequence[tuple[str, ASGIApp]] = ()) -> FastAPI:
    """The application for the workspace `current()` gives, served at `base_url`."""
    app = DescribedApi(title="kbsync", version=__version__, description=DESCRIPTION, openapi_url=OPENAPI_PATH,
                  docs_url=None, redoc_url=None, servers=[{"url": base_url}])
    app.state.current = current
    problems.install(app)
    app.include_router(_api())
    site.install(app)
    for path, sub in mounts:  # "/x/": everything under /x; "/x": that one path, handed on as it is
        if path.endswith("/"):
            app.mount(path.rstrip("/"), sub)
        else:
            app.router.routes.append(Route(path, sub))
    return app


def guarded(current: Callable[[], Workspace], *, base_url: str, hosts: frozenset[str], port: int, max_body: int,
            mounts: Sequence[tuple[str, ASGIApp]] = ()) -> Guard:
    """The application behind its guard: what the server runs."""
    ws = current()
    return Guard(build(current, base_url=base_url, mounts=mounts), current=current, tokens=TokenCache(ws),
                 hosts=hosts, cookie=f"kbsync_session_{port}", max_body=max_body)
