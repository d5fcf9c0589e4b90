"""The board page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
LABELS: dict[str, dict[str, str]] = {"en": {}, "zh": {}}


@router.get("/board")
def show(request: Request) -> HTMLResponse:
    return page(request, "error.html", LABELS, message="board")
