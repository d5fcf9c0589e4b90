"""kbsync.web.routing: a blocking endpoint runs in a worker thread, and FastAPI's own work for the request (the
workspace dependency, the validation of the response) stays on the event loop: one trip to the thread pool a
request instead of three. Served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import threading

import requests
from fastapi import Depends, FastAPI
from pydantic import BaseModel, field_validator

from helpers.mcp import serving
from kbsync.web.routing import Router

seen: dict[str, str] = {}


class Answer(BaseModel):
    value: int

    @field_validator("value")
    @classmethod
    def note_thread(cls, v: int) -> int:
        seen.setdefault("validated", threading.current_thread().name)
        return v


async def loop_thread() -> str:
    return threading.current_thread().name


def app() -> FastAPI:
    router = Router()

    @router.get("/blocking", response_model=Answer)
    def blocking(loop: str = Depends(loop_thread)) -> dict[str, int]:
        seen["loop"], seen["endpoint"] = loop, threading.current_thread().name
        return {"value": 1}  # made an Answer by FastAPI's validation of the response

    built = FastAPI()
    built.include_router(router, prefix="/api")
    return built


def test_a_blocking_endpoint_alone_runs_in_a_worker_thread() -> None:
    seen.clear()
    with serving(app()) as url:
        got = requests.get(f"{url}/api/blocking", timeout=10)
    assert got.status_code == 200 and got.json() == {"value": 1}
    assert seen["endpoint"] != seen["loop"]  # the endpoint blocked a worker thread, not the event loop
    assert seen["validated"] == seen["loop"]  # the response was validated on the event loop
