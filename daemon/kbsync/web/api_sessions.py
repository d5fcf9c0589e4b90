"""`/sessions` and `/logs`: the same app functions as `kbsync session save|section` and `kbsync log`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Response

from kbsync.app import sessions, shapes
from kbsync.results import Logged, SectionWritten, Session, SessionPage, SessionRecord
from kbsync.web import models as m
from kbsync.web.deps import WS, BasedOn, etag
from kbsync.web.routing import Router

router = Router(tags=["sessions"])
SessionId = Annotated[str, Path(pattern=sessions.ID_PATTERN, description="YYYYMMDD-HHMM-<7 hex>")]


@router.post("/sessions", response_model=SessionRecord, status_code=201,
             responses={200: {"model": SessionRecord, "description": "an existing session updated"}},
             summary="save a session (201 created; 200 when that session_id existed and was updated)")
def post_session(ws: WS, body: m.SessionSave, response: Response) -> SessionRecord:
    result = sessions.save_session(ws, body.model_dump(exclude_unset=True), "request body")
    response.status_code = 201 if result.created else 200
    return result.record


@router.get("/sessions", response_model=SessionPage, summary="sessions newest first, filtered, a page at a time")
def get_sessions(ws: WS, tag: str | None = None, status: str | None = None,
                 since: Annotated[str | None, Query(description="YYYY-MM-DD")] = None,
                 until: Annotated[str | None, Query(description="YYYY-MM-DD")] = None,
                 q: Annotated[str, Query(description="words the session must hold")] = "",
                 limit: Annotated[int, Query(ge=1, le=sessions.MAX_PAGE)] = 50,
                 cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
                 ) -> SessionPage:
    page = sessions.list_sessions(ws, tag=tag, status=status, since=since, until=until, q=q, limit=limit,
                                  cursor=cursor)
    return shapes.session_page(page)


@router.get("/sessions/{sid}", response_model=Session, summary="one session: frontmatter, sections, path")
def get_session(ws: WS, sid: SessionId) -> Session:
    return shapes.session(sessions.read_session(ws, sid))


@router.put("/sessions/{sid}/sections/{heading}", response_model=SectionWritten,
            summary="replace one section of a session (?append=true: add to it; with If-Match, a section changed "
                    "since is 409 `stale`)")
def put_section(ws: WS, sid: SessionId, heading: str, body: m.SectionText, base: BasedOn, response: Response,
                append: bool = False) -> SectionWritten:
    result = sessions.write_section(ws, sid, heading, body.text, append=append, base=base)
    response.headers.update(etag(result.version))
    return shapes.section_written(result)


@router.post("/logs/tool-calls", response_model=Logged, status_code=201, tags=["logs"],
             summary="append a line to logs/tool-calls.md")
def post_tool_call(ws: WS, body: m.ToolCall) -> Logged:
    return shapes.logged(sessions.log_tool_call(ws, body.session, body.tool, body.status, body.detail))


@router.post("/logs/errors", response_model=Logged, status_code=201, tags=["logs"],
             summary="append a line to logs/errors.md")
def post_error(ws: WS, body: m.ErrorLog) -> Logged:
    return shapes.logged(sessions.log_error(ws, body.message))
