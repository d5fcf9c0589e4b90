"""Sessions and logs: save, read and list sessions, write one section, split a session, log a tool call or
an error."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kbsync.core import protocol
from kbsync.errors import ProtocolError, UsageError

ROLES = protocol.ROLES
STATUSES = protocol.STATUSES
ID_PATTERN = protocol.ID_RE.pattern
MAX_PAGE = 500

if TYPE_CHECKING:
    from kbsync.retrieval.db import Row
    from kbsync.store.sections import SectionResult
    from kbsync.store.sessions import SaveResult
    from kbsync.store.split import SplitResult
    from kbsync.store.workspace import Workspace


def save_session(ws: Workspace, payload: dict[str, Any], where: str = "<stdin>") -> SaveResult:
    """Create or update the session a `session save` object describes (`where` names it in errors)."""
    from kbsync.retrieval.index import written
    from kbsync.store.sessions import save_session as save

    result = save(ws, payload, where)
    written(ws, [result.relpath])  # found by search when the call returns
    return result


def write_section(ws: Workspace, sid: str, name: str, text: str, *, append: bool = False,
                  base: str | None = None) -> SectionResult:
    """Replace (or append to) the section `name` of session `sid`, under the file's lock; with `base` (the
    section's version as read), only if it has not changed since (StaleError otherwise)."""
    from kbsync.retrieval.index import written
    from kbsync.store.sections import write_section as write

    result = write(ws, sid, name, text, append=append, base=base)
    written(ws, [result.relpath])
    return result


def split_session(ws: Workspace, sid: str, at: list[int] | None = None) -> SplitResult:
    """Split session `sid` into child sessions at its topic headings, or at the given file lines."""
    from kbsync.retrieval.index import written
    from kbsync.store.split import split_session as split

    result = split(ws, sid, at)
    written(ws, [result.relpath, *(c.relpath for c in result.children)])
    return result


def log_tool_call(ws: Workspace, session: str, tool: str, status: str = "ok", detail: str = "") -> str:
    """Append one line to logs/tool-calls.md; the line written."""
    from kbsync.store.eventlog import log_tool_call as log

    return log(ws, session, tool, status, detail)


def log_session_tool_call(ws: Workspace, sid: str, tool: str, status: str = "ok", detail: str = "") -> str:
    """Append one line to logs/tool-calls.md for session `sid` (its id, or the raw id it was saved under), under
    its id; NotFoundError (InputError) when there is no such session, as `write_section` refuses one."""
    from kbsync.store.sessions import find_given

    relpath = find_given(ws, sid.strip())
    return log_tool_call(ws, protocol.id_from_relpath(relpath) or sid.strip(), tool, status, detail)


def log_error(ws: Workspace, message: str) -> str:
    """Append one line to logs/errors.md; the line written."""
    from kbsync.store.eventlog import log_error as log

    return log(ws, message)


def decode_text(raw: bytes, where: str) -> str:
    """Text input as the workspace reads files: UTF-8, no NUL bytes, a BOM dropped (InputError naming `where`);
    no other control characters, CR line breaks made LF (kbsync.core.textguard)."""
    from kbsync.core.textguard import clean
    from kbsync.store.workspace import decode

    return clean(decode(raw, where), "the text", where=where, multiline=True)


@dataclass(frozen=True)
class SessionView:
    id: str
    path: str
    frontmatter: dict[str, Any]  # the protocol's fields, typed
    extra_frontmatter: list[str]  # lines of fields the protocol does not know, as written
    preamble: str  # body text before the first section
    sections: list[tuple[str, str]]  # (heading, content) in file order

    @property
    def section_versions(self) -> list[str]:
        """Each section's version, in file order: what an update of it sends back as its `base`."""
        from kbsync.core.versions import version_of

        return [version_of(content) for _heading, content in self.sections]


@dataclass(frozen=True)
class SessionSummary:
    id: str
    title: str
    ts: str
    path: str
    tags: list[str]
    status: str
    summary: str
    problem: str  # why the frontmatter could not be read; "" when it could


@dataclass(frozen=True)
class SessionPage:
    sessions: list[SessionSummary]
    next_cursor: str | None  # give it as `cursor` for the next page; None on the last page


def read_session(ws: Workspace, sid: str) -> SessionView:
    """Session `sid`: its path, frontmatter and sections (ProtocolError when its frontmatter cannot be read)."""
    from kbsync.core.session import parse_session
    from kbsync.store.sessions import find_by_id

    relpath = find_by_id(ws, sid)
    try:
        doc = parse_session(ws.read_text(relpath))
    except ProtocolError as exc:
        raise ProtocolError(f"{exc.message}; run `kbsync repair {relpath}`", path=relpath, line=exc.line) from exc
    return SessionView(sid, relpath, doc.fields, [line for block in doc.extra for line in block], doc.preamble,
                       list(doc.sections))


def list_sessions(ws: Workspace, *, tag: str | None = None, status: str | None = None, since: str | None = None,
                  until: str | None = None, q: str = "", limit: int = 50, cursor: str | None = None,
                  refresh: bool = True) -> SessionPage:
    """Sessions newest first, filtered by tag, status, date range (YYYY-MM-DD) and words, a page at a time;
    the index first catches up with the files unless `refresh` is False."""
    from kbsync.retrieval.listing import list_sessions as listing
    from kbsync.retrieval.text import parse_query, with_filters

    if not 1 <= limit <= MAX_PAGE:
        raise UsageError(f"limit {limit}: give 1 to {MAX_PAGE}")
    query = with_filters(parse_query(q), tag=tag, status=status, since=since, until=until)
    if query.errors:
        raise UsageError("; ".join(query.errors))
    rows = listing(ws, query, limit + 1, _after(cursor), refresh=refresh)
    more = len(rows) > limit
    return SessionPage([summary_of(r) for r in rows[:limit]],
                       _cursor(rows[limit - 1].date, rows[limit - 1].key) if more else None)


def summary_of(r: Row) -> SessionSummary:
    """A session's line in a listing, from its record in the search index."""
    return SessionSummary(str(r.fields.get("id") or protocol.id_from_relpath(r.relpath) or ""), r.title,
                          str(r.fields.get("ts") or ""), r.relpath, list(r.fields.get("tags") or []), r.status,
                          r.summary, r.broken)


def _cursor(date: str, key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([date, key]).encode("utf-8")).decode("ascii").rstrip("=")


def _after(cursor: str | None) -> tuple[str, str] | None:
    if not cursor:
        return None
    try:
        date, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise UsageError("cursor: not a cursor this server gave; start again without it") from exc
    if not (isinstance(date, str) and isinstance(key, str)):
        raise UsageError("cursor: not a cursor this server gave; start again without it")
    return date, key
