"""Listing sessions newest first, filtered, one page at a time, from the search database.

The database is brought up to date with the files first (`index.refresh`: a stat of each file, a
re-read of those that changed), so a listing shows what is on disk even where no daemon runs.
A page continues after the date and key of the last record of the previous one.
"""

from __future__ import annotations

from kbsync.retrieval import db as searchdb
from kbsync.retrieval import index as searchindex
from kbsync.retrieval.db import Row
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace


def list_sessions(ws: Workspace, query: Query, limit: int, after: tuple[str, str] | None = None) -> list[Row]:
    """Up to `limit` session records passing `query`, newest first, from just past `after`."""
    searchindex.refresh(ws)
    conn = searchindex.open_index(ws)
    try:
        return searchdb.listing(conn, query, "session", limit, after)
    finally:
        conn.close()
