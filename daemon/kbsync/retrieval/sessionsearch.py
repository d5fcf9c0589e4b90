"""The sessions a query matches, counted, and ranked a page at a time (the web board's sessions page).

The count is the keyword search's (`searchdb.count`): the sessions holding any of the query's terms and every
term of each quoted phrase, passing its filters. A page is the search's ranked list of them cut at its end
(`searchdb.search` asked for page x size records: the first page costs what a search for it costs, a later
one reads and ranks the records of the pages before it too). The first page is in the order federated search
gives the sessions kind: its keyword hits blended with the semantic index's nearest sessions
(`blended_sessions`), kept to the sessions the keyword leg found, so the pages hold what the count counts and
no session is on two of them; later pages keep the keyword order (the semantic leg reaches the first page).
"""

from __future__ import annotations

from dataclasses import dataclass

from kbsync.retrieval import db as searchdb
from kbsync.retrieval import index as searchindex
from kbsync.retrieval.search import blended_sessions, searchable
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace

KIND = "session"


@dataclass(frozen=True)
class Ranked:
    query: Query
    rows: list[searchdb.Row]  # the page's sessions, best first
    total: int  # the sessions the query matches, on every page
    page: int  # the page shown (1-based; one asked for past the last is the last)
    pages: int
    failure: str  # why the semantic leg did not answer ("" when it did, or is off)


def ranked_sessions(ws: Workspace, text: str, page: int, size: int) -> Ranked:
    """Page `page` of `size` sessions matching `text` (a query as `kbsync search` takes it), with their count;
    UsageError for a query that cannot be searched."""
    query = searchable(text)
    searchindex.build_missing(ws)
    with searchdb.reading(searchdb.db_path(ws.state_dir)) as conn:
        total = searchdb.count(conn, query, KIND)
        pages = max(1, -(-total // size))
        page = min(max(page, 1), pages)
        rows = searchdb.search(conn, query, KIND, page * size, bodies=searchindex.bodies(ws)) if total else []
    rows = rows[(page - 1) * size:]
    failure = ""
    if page == 1 and rows and query.words:
        blended, failure = blended_sessions(ws, query, rows, 2 * size)
        by_key = {r.key: r for r in rows}
        rows = [by_key[h.key] for h in blended if h.key in by_key]
    return Ranked(query, rows, total, page, pages, failure)
