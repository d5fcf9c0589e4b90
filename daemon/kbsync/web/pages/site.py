"""The pages on the application: their routers, /static/, "/" -> /board, and errors answered as a page
(in the API's words) for a page's request, as JSON for the API's."""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from kbsync.web.guard import STATIC_PREFIX
from kbsync.web.pages import PAGES
from kbsync.web.pages.render import page

Handler = Callable[[Request, Exception], Response]
NO_LABELS: dict[str, dict[str, str]] = {}


def install(app: FastAPI) -> None:
    """Add the pages to `app` (after the API and its error handlers)."""
    for module in PAGES:
        app.include_router(module.router)
    app.add_api_route("/", _home, methods=["GET"], include_in_schema=False)
    static = StaticFiles(packages=[("kbsync.web", "static")])
    app.mount(STATIC_PREFIX.rstrip("/"), static, name="static")
    handlers: dict[Any, Handler] = dict(app.exception_handlers)
    for cls, handler in handlers.items():
        if not inspect.iscoroutinefunction(handler):  # the API's own (kbsync.web.problems); not the websocket one
            app.add_exception_handler(cls, _as_page(handler))


def _home() -> RedirectResponse:
    return RedirectResponse("/board", status_code=303)


def is_page(request: Request) -> bool:
    return not request.url.path.startswith(("/api/", "/mcp", STATIC_PREFIX))


def _as_page(handler: Handler) -> Handler:
    def answer(request: Request, exc: Exception) -> Response:
        response = handler(request, exc)
        if not is_page(request) or (isinstance(exc, HTTPException) and exc.status_code == 405):
            return response
        message = json.loads(bytes(response.body))["error"]["message"]
        return page(request, "error.html", NO_LABELS, status=response.status_code, message=message)
    return answer
