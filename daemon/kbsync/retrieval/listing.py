"""Listing sessions newest first, filtered, one page at a time, from the search database.

The database is brought up to date with the files first (`index.refresh`: a stat of each file, a
re-read of those that changed), so a listing shows what is on disk even where no daemon runs.
A page continues after the date and key of the last record of the previous one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from kbsync.core.paging import clamped
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.db import Row
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace


def list_sessions(ws: Workspace, query: Query, limit: int, after: tuple[str, str] | None = None, *,
                  refresh: bool = True) -> list[Row]:
    """Up to `limit` session records passing `query`, newest first, from just past `after` (with `refresh`
    False, from the index as it stands)."""
    if refresh:
        index.refresh(ws)
    conn = index.open_index(ws)
    try:
        return db.listing(conn, query, "session", limit, after, bodies=index.bodies(ws))
    finally:
        conn.close()


@dataclass(frozen=True)
class Numbered:
    rows: list[Row]  # the page's records, newest first
    total: int  # the records passing the filters, on every page
    page: int  # the page shown (1-based; one asked for past the last is the last)
    pages: int


def numbered_page(ws: Workspace, query: Query, size: int, page: int, *, refresh: bool = True) -> Numbered:
    """Page `page` of `size` session records passing the filters of `query` (a query of filters alone), newest
    first, with how many pass them (with `refresh` False, from the index as it stands)."""
    if refresh:
        index.refresh(ws)
    conn = index.open_index(ws)
    try:
        total = ranking.count(conn, query, "session")
        page, pages = clamped(page, total, size)
        return Numbered(db.filtered_page(conn, query, "session", size, (page - 1) * size), total, page, pages)
    finally:
        conn.close()


@dataclass(frozen=True)
class Facets:
    months: list[tuple[str, int]]  # (YYYY-MM, sessions), newest first
    days: list[tuple[str, int]]  # (YYYY-MM-DD, sessions) of the chosen month, newest first; [] without one
    tags: list[tuple[str, int]]  # (tag, sessions) within the chosen month or day, most used first


def facets(ws: Workspace, tag: str, month: str, day: str) -> Facets:
    """Session counts by month (within `tag`), by day of `month`, and by tag (within `day`, else `month`),
    from the index as it stands (list first: that brings it up to date)."""
    conn = index.open_index(ws)
    try:
        tagged = Query(tags=(tag.casefold(),) if tag else ())
        months = db.date_counts(conn, tagged, "session", 7)
        days = db.date_counts(conn, replace(tagged, since=month, until=month), "session", 10) if month else []
        when = day or month
        counted = Counter(t for cell in db.tag_cells(conn, Query(since=when, until=when), "session")
                          for t in cell)
        return Facets(months, days, sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))
    finally:
        conn.close()


def children(ws: Workspace, parent: str) -> list[Row]:
    """The sessions whose `parent` is `parent`, from the index as it stands."""
    conn = index.open_index(ws)
    try:
        return db.children(conn, parent)
    finally:
        conn.close()
