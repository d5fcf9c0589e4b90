"""`/conflicts`: the same app functions as `kbsync conflicts [list]|diff|resolve`.

A conflict is named in a URL by its workspace path, from the workspace root, as the list gives it
(`memory/facts.conflict-20250611T143207Z-a1b2c3.md`; the file itself when it has one copy). The path
gate refuses an absolute path, `..`, .git/, .kbsync/ and symlinks before anything is read.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from kbsync.app import conflicts, shapes
from kbsync.results import Conflict, ConflictShown, Resolved
from kbsync.web import models as m
from kbsync.web.deps import WS
from kbsync.web.routing import Router

router = Router(tags=["conflicts"])
WsPath = Annotated[str, Path(description="the conflict copy's path from the workspace root, or the file's when it has "
                                         "one copy", examples=["memory/facts.conflict-20250611T143207Z-a1b2c3.md"])]


@router.get("/conflicts", response_model=list[Conflict],
            summary="every conflict copy and every file marked status: conflict, with both versions' times and machines")
def list_conflicts(ws: WS) -> list[Conflict]:
    return [i.as_dict() for i in conflicts.list_conflicts(ws)]


@router.get("/conflicts/{path:path}", response_model=ConflictShown,
            summary="one conflict: both versions and the diff from theirs to mine")
def show_conflict(ws: WS, path: WsPath) -> ConflictShown:
    return shapes.conflict_shown(conflicts.show(ws, conflicts.named(ws, path)))


@router.post("/conflicts/{path:path}/resolve", response_model=Resolved,
             summary="settle a conflict: write the kept version, remove the copy, commit both paths")
def resolve(ws: WS, path: WsPath, body: m.Keep) -> Resolved:
    return conflicts.resolve(ws, conflicts.named(ws, path), body.keep).as_dict()
