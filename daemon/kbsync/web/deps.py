"""What every endpoint is given: the workspace as currently configured."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from kbsync.app.workspace import Workspace


async def current_workspace(request: Request) -> Workspace:
    """A coroutine, so that FastAPI calls it on the event loop (a plain function goes to a worker thread)."""
    ws: Workspace = request.app.state.current()
    return ws


WS = Annotated[Workspace, Depends(current_workspace)]
