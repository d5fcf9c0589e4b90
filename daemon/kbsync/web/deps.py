"""What every endpoint is given: the workspace as currently configured, and the version an update is based
on (If-Match)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from kbsync.app.workspace import Workspace


async def current_workspace(request: Request) -> Workspace:
    """A coroutine, so that FastAPI calls it on the event loop (a plain function goes to a worker thread)."""
    ws: Workspace = request.app.state.current()
    return ws


WS = Annotated[Workspace, Depends(current_workspace)]


def based_on(if_match: Annotated[str | None, Header(
        description="the version (ETag) the update is based on; a thing changed since is not overwritten: 409 "
                    "`stale` with its current version and content. Absent or `*`: no check")] = None) -> str | None:
    """The version named by If-Match (one entity tag, quotes and a weak `W/` dropped), None for none or `*`."""
    if if_match is None or if_match.strip() in ("", "*"):
        return None
    return if_match.strip().removeprefix("W/").strip('"')


BasedOn = Annotated[str | None, Depends(based_on)]


def etag(version: str) -> dict[str, str]:
    """The ETag header of a thing at `version`."""
    return {"ETag": f'"{version}"'}
