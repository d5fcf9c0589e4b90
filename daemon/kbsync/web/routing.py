"""The API's router: a blocking endpoint (a plain `def`, as every app function blocks on files, git or the
search database) runs in a worker thread with nothing else, and FastAPI's own work around it on the event loop.

FastAPI runs a plain `def` endpoint in the thread pool, and then, because the endpoint was not a coroutine,
the validation of its response in the thread pool again, and each plain `def` dependency too: three trips
to a worker thread and back for one request, each a wake-up of two threads and a hand-over of the
interpreter lock. Wrapped as a coroutine that awaits the endpoint in the pool, the request makes one.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool


def in_thread(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """`endpoint` as a coroutine function that runs it in the thread pool; a coroutine function as it is.
    The wrapper keeps the endpoint's signature (FastAPI reads it through __wrapped__)."""
    if inspect.iscoroutinefunction(endpoint):
        return endpoint

    @functools.wraps(endpoint)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(endpoint, *args, **kwargs)
    return run


class Router(APIRouter):
    """An APIRouter whose plain `def` endpoints run as `in_thread` makes them."""

    def add_api_route(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().add_api_route(path, in_thread(endpoint), **kwargs)
