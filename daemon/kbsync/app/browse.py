"""Browsing and searching sessions as a person does on the web board: counts by month, day and tag beside
a page of sessions, and search results with the query's words marked.

Dates are the sessions' `ts` in UTC, as the search index and `kbsync stats` keep them. A listing reads the
index as kbsync.app.catchup keeps it, so it can be one view behind a change the daemon's watcher has not
indexed yet (with the daemon running, its watcher keeps the index current).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from kbsync.app.catchup import catch_up_due
from kbsync.app.flagview import families
from kbsync.app.sessions import SessionSummary, summary_of
from kbsync.core.highlight import Segment
from kbsync.errors import UsageError

if TYPE_CHECKING:
    from kbsync.retrieval.db import Row
    from kbsync.retrieval.fusion import Fused
    from kbsync.store.workspace import Workspace

_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_DAY = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_HEADING = re.compile(r"^#{1,6}(\s|$)")
SEARCH_PAGE = 25  # sessions a page of search results shows
BROWSE_PAGE = 50  # sessions a page of the listing shows


@dataclass(frozen=True)
class Count:
    value: str  # a month (YYYY-MM), a day (YYYY-MM-DD) or a tag
    sessions: int


@dataclass(frozen=True)
class Browse:
    month: str  # the chosen month, "" for all
    day: str  # the chosen day, "" for the whole month
    tag: str  # the chosen tag, "" for all
    months: list[Count]  # every month with sessions (of the tag), newest first
    days: list[Count]  # the chosen month's days with sessions (of the tag), newest first
    tags: list[Count]  # tags of the chosen month or day, most used first
    sessions: list[SessionSummary]  # the page's sessions, newest first
    total: int  # the sessions of the chosen month or day and tag, on every page
    page: int  # the page shown (1-based; one asked for past the last is the last)
    pages: int
    first: int  # the number of the page's first session in the whole list (1-based)


@dataclass(frozen=True)
class SessionHit:
    """A session a search found, the query's words marked in its title, summary and snippet."""

    session_id: str | None  # None for a file whose name encodes no id (then it has no page)
    title: list[Segment]
    summary: list[Segment]
    snippet: list[Segment]  # around the first match in its text ([] when there is none, or it cannot be read)
    path: str
    when: str  # its `ts`
    tags: tuple[str, ...]
    flags: list[str] = field(default_factory=list)  # families of the embedded instructions its record carries


@dataclass(frozen=True)
class Found:
    query: str
    terms: tuple[str, ...]
    hits: list[SessionHit]  # the page's sessions, best first
    total: int  # the sessions that match, on every page
    page: int
    pages: int
    first: int  # the number of the page's first session in the whole list (1-based)
    failures: list[tuple[str, str]]  # (source, why) of the search's legs that did not answer


def _dates(month: str, day: str) -> tuple[str, str]:
    if day and not _DAY.match(day):
        raise UsageError(f"day={day!r}: write YYYY-MM-DD")
    if month and not _MONTH.match(month):
        raise UsageError(f"month={month!r}: write YYYY-MM")
    if day and month and not day.startswith(month):
        raise UsageError(f"day {day} is not in month {month}; give one of them")
    return (month or day[:7]), day


def browse_sessions(ws: Workspace, *, month: str = "", day: str = "", tag: str = "", page: int = 1,
                    size: int = BROWSE_PAGE) -> Browse:
    """Page `page` of the sessions of the chosen month or day and tag, newest first, with how many there are
    and the counts to narrow them by."""
    from kbsync.retrieval.listing import facets, numbered_page
    from kbsync.retrieval.text import Query

    month, day = _dates(month, day)
    when = day or month
    shown = numbered_page(ws, Query(tags=(tag.casefold(),) if tag else (), since=when, until=when), size, page,
                          refresh=catch_up_due(ws))
    found = facets(ws, tag, month, day)
    return Browse(month, day, tag, [Count(*m) for m in found.months], [Count(*d) for d in found.days],
                  [Count(*t) for t in found.tags], [summary_of(r) for r in shown.rows], shown.total, shown.page,
                  shown.pages, (shown.page - 1) * size + 1)


def search_sessions(ws: Workspace, query: str, page: int = 1, size: int = SEARCH_PAGE) -> Found:
    """Page `page` of the sessions matching `query`, ranked as the search ranks them, with how many match
    (kbsync.retrieval.sessionsearch), the query's words marked in each title, summary and snippet."""
    from kbsync.app.guard import learned
    from kbsync.retrieval.sessionsearch import ranked_sessions
    from kbsync.retrieval.sources.semantic import SEMANTIC

    found = ranked_sessions(ws, query, page, size)
    terms = (*found.query.terms, *found.query.phrases)
    verdicts = learned(ws) if found.rows else None
    hits = [_hit(ws, r, terms, verdicts.records.get(r.key, ()) if verdicts else ()) for r in found.rows]
    failures = [(SEMANTIC, found.failure)] if found.failure else []
    return Found(query, terms, hits, found.total, found.page, found.pages, (found.page - 1) * size + 1, failures)


def _hit(ws: Workspace, row: Row, terms: tuple[str, ...], learned: Iterable[dict[str, object]]) -> SessionHit:
    from kbsync.core import protocol
    from kbsync.core.highlight import mark, snippet

    text = _workspace_text(ws, row.relpath)
    return SessionHit(protocol.id_from_relpath(row.relpath), mark(row.title, terms), mark(row.summary, terms),
                      mark(snippet(text, terms), terms) if text else [], row.relpath, row.date, row.tags,
                      families([*row.flags, *learned]))


def session_of(hit: Fused) -> str | None:
    """The id of the session of this workspace a search hit is, or None."""
    from kbsync.core import protocol

    return protocol.id_from_relpath(hit.path) if hit.path and protocol.classify(hit.path) == "session" else None


def _workspace_text(ws: Workspace, relpath: str) -> str:
    """The body of a workspace file a hit names, headings left out ("" when the path is not one, or it
    cannot be read)."""
    from kbsync.core import frontmatter, pathrules
    from kbsync.errors import KbsyncError

    if not relpath or pathrules.refusal(relpath) or not ws.path(relpath).is_file():
        return ""
    try:
        body = frontmatter.split(ws.read_text(relpath)).body
    except (KbsyncError, OSError):
        return ""
    return "\n".join(line for line in body.splitlines() if not _HEADING.match(line))
