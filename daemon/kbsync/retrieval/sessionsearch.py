"""The sessions a query matches, counted, and ranked a page at a time (the web board's sessions page).

The count is the keyword search's (ranking.count): the sessions holding any of the query's terms and every
term of each quoted phrase, passing its filters. The list is the search's, a window at a time
(ranking.window): its candidates in the index's order, two pages' worth at a time, each window ranked by
relevance from the text, as ranking.search ranks its candidates (the first window ranked is what a search
for one page returns). So each matching session is on one page only, and every page costs what the first
does. The first page is in the order federated search gives the sessions kind: its keyword hits blended with
the semantic index's nearest sessions (`blended_sessions`), kept to the sessions the keyword leg found, so the
pages hold what the count counts; later pages keep the keyword order (the semantic leg reaches the first).
"""

from __future__ import annotations

from dataclasses import dataclass

from kbsync.core.paging import clamped
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.search import blended_sessions, searchable
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace

KIND = "session"
WINDOW_PAGES = 2  # pages a window of candidates holds: a search ranks twice the records it returns


@dataclass(frozen=True)
class Ranked:
    query: Query
    rows: list[db.Row]  # the page's sessions, best first
    total: int  # the sessions the query matches, on every page
    page: int  # the page shown (1-based; one asked for past the last is the last)
    pages: int
    failure: str  # why the semantic leg did not answer ("" when it did, or is off)


def ranked_sessions(ws: Workspace, text: str, page: int, size: int) -> Ranked:
    """Page `page` of `size` sessions matching `text` (a query as `kbsync search` takes it), with their count;
    UsageError for a query that cannot be searched."""
    query = searchable(text)
    index.build_missing(ws)
    with db.reading(db.db_path(ws.state_dir)) as conn:
        total = ranking.count(conn, query, KIND)
        page, pages = clamped(page, total, size)
        at, half = divmod(page - 1, WINDOW_PAGES)
        rows = ranking.window(conn, query, KIND, at * WINDOW_PAGES * size, WINDOW_PAGES * size,
                               bodies=index.bodies(ws))[half * size:(half + 1) * size] if total else []
    failure = ""
    if page == 1 and rows and query.words:
        blended, failure = blended_sessions(ws, query, rows, 2 * size)
        by_key = {r.key: r for r in rows}
        rows = [by_key[h.key] for h in blended if h.key in by_key]
    return Ranked(query, rows, total, page, pages, failure)
