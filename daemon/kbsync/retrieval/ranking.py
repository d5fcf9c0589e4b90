"""The keyword search over the search database (kbsync.retrieval.db): a query's candidates found in the
full-text index, the best of them read from their files and ranked by kbsync.retrieval.relevance.

`searches` (and `search`, one kind) return the best records of each kind; `window` a slice of the candidates in
the index's order, ranked; `count` how many records a query matches. What the ranking asks of the whole index
(the record count, the average length, each term's number of records) is asked once per read transaction
(`_Stats`). Storage, connections and transactions are kbsync.retrieval.db's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Iterator, Sequence

from kbsync.retrieval import relevance
from kbsync.retrieval.db import COLUMNS, Bodies, Connection, Row, Span, filters, head_of, kind_span, to_row, transaction
from kbsync.retrieval.text import Query, holds, match_term, query_terms


def search(conn: Connection, query: Query, kind: str, limit: int, *, bodies: Bodies) -> list[Row]:
    """The best `limit` records of `kind` for `query` (see `searches`)."""
    return searches(conn, query, [kind], limit, bodies=bodies)[kind]


def searches(conn: Connection, query: Query, kinds: Sequence[str], limit: int, *,
             bodies: Bodies) -> dict[str, list[Row]]:
    """The best `limit` records of each of `kinds` for `query`, most relevant first; newest first when it has no
    words. All kinds are searched in one state of the database, and what the ranking asks of the whole index
    (record count, average length, each term's number of records) is asked once for all of them.

    A record matches when it holds any of the query's terms (kbsync.retrieval.text.query_terms) and every
    quoted phrase. The candidates are found in the index (`_candidates`: a bm25 that knows whether a record
    holds a term and where, not how often), then the best of them are read from their files and ranked by
    kbsync.retrieval.relevance, which names each one's best passages.
    """
    with transaction(conn, write=False):  # the ranking and the records it names read one state of the database
        stats = _Stats(conn)
        return {kind: _search(conn, query, kind, limit, bodies, stats) for kind in kinds}
CANDIDATES = 20  # records a search reads and ranks from their text, at least (twice what it returns)
FIND_POSTINGS = 20_000  # the records a search finds its candidates among, at most (a term's records in all)
BEST_PASSAGES = 3  # passages a hit keeps, best first


def _search(conn: Connection, query: Query, kind: str, limit: int, bodies: Bodies, stats: _Stats,
            start: int | None = None) -> list[Row]:
    """The best `limit` records; with `start`, the `limit` candidates from the `start`-th on, all of them ranked
    (a window of the list, see `window`)."""
    where, params = filters(query)
    terms = query_terms(query) if query.words else ()
    if not terms:
        sql = f"SELECT {COLUMNS} FROM docs d WHERE d.kind = ?{where} ORDER BY d.date DESC, d.key LIMIT ? OFFSET ?"
        return [to_row(r) for r in conn.execute(sql, [kind, *params, limit, start or 0])]
    span = stats.span(kind)
    present = [t for t in terms if stats.df(t)]
    if span is None or not present or limit <= 0:
        return []
    records, average = stats.sizes()
    weights = {t: relevance.idf(records, stats.df(t)) for t in present}
    timed = relevance.idf(records, stats.dated(query.when)) if query.when else 0.0
    whole = (sum(weights.values()) + (len(terms) - len(present)) * relevance.idf(records, 0)  # absent terms weigh most
             + timed)
    finders = _finders(present, stats)
    telling = {t for t in present if stats.df(t) * 2 <= records}  # held by at most half the records
    common = min(present, key=lambda t: (stats.df(t), t)) if not finders else None
    pool = max(CANDIDATES, 2 * limit) if start is None else limit
    scored: list[Row] = []
    for found in _candidates(conn, present, finders, telling, common, weights, span, where, params, query.phrases, pool,
                             average, start or 0):
        text = bodies([r for r, _ in found])
        for row, length in found:
            body = text.get(row.key, "")
            if query.phrases and not holds(_folded((*head_of(row), body)), tuple(p.casefold() for p in query.phrases)):
                continue
            got = relevance.score(present, weights, head_of(row), body, length / max(average, 1.0),
                                  whole=row.kind == "board", time_weight=timed, in_time=_in_time(row.date, query.when))
            scored.append(dataclasses.replace(row, score=got.score, cover=got.held / whole, passages=tuple(
                sp for sp in got.passages[:BEST_PASSAGES] if sp[0] > 0)))
        if len(scored) >= pool or start is not None:
            break
    scored.sort(key=lambda r: (-r.score, r.key))
    return scored[:limit]


def window(conn: Connection, query: Query, kind: str, start: int, size: int, *, bodies: Bodies) -> list[Row]:
    """The `size` candidates of `kind` for `query` from the `start`-th on (in the index's order, `_candidates`;
    newest first for a query of filters alone), ranked by relevance as `search` ranks its candidates. The
    windows at 0, size, 2 x size ... hold each matching record once, so a list paged window by window shows
    each once, and costs the same at every depth; the window at 0 ranked is what `search` returns for
    `size` / 2 (its candidates are twice what it returns). A quoted phrase is checked in the text, so a window
    of a query with one may hold fewer."""
    with transaction(conn, write=False):
        return _search(conn, query, kind, size, bodies, _Stats(conn), start)


def count(conn: Connection, query: Query, kind: str) -> int:
    """How many records of `kind` a search for `query` matches: those holding any of its terms and every term of
    each quoted phrase, passing its filters (every record of `kind` passing them, for a query of filters
    alone). One COUNT over the full-text matches in the kind's range: a phrase is counted by its terms, as the
    index holds them, not checked as written in the text (`searches` does, so a phrase's count may be more than
    the records it ranks)."""
    where, params = filters(query)
    terms = query_terms(query) if query.words else ()
    if not terms:
        return int(conn.execute(f"SELECT count(*) FROM docs d WHERE d.kind = ?{where}", [kind, *params]).fetchone()[0])
    span = kind_span(conn, kind)
    if span is None:
        return 0
    need = [t for p in query.phrases for t in query_terms(Query(phrases=(p,)))]
    match = " AND ".join([f"({' OR '.join(match_term(t) for t in terms)})", *dict.fromkeys(map(match_term, need))])
    join = " JOIN docs d ON d.id = fts.rowid" if where else ""
    sql = f"SELECT count(*) FROM fts{join} WHERE fts MATCH ? AND fts.rowid > ? AND fts.rowid < ?{where}"
    return int(conn.execute(sql, [match, *span, *params]).fetchone()[0])


def _finders(terms: list[str], stats: _Stats) -> list[str]:
    """The terms whose records are all candidates: the rarest first, while their records add up to FIND_POSTINGS
    (none when even the rarest is held by more). A term many records hold tells little and would cost a pass over
    all of them: it finds candidates by its records' heads alone, and one that more than half the records hold
    (its idf near 0) not at all; when no term is rare, the rarest finds its newest records too. Every term
    counts in the ranking of every candidate."""
    chosen: list[str] = []
    total = 0
    for t in sorted(terms, key=lambda t: (stats.df(t), t)):
        if total + stats.df(t) > FIND_POSTINGS:
            break
        chosen.append(t)
        total += stats.df(t)
    return chosen


def _candidates(conn: Connection, terms: list[str], finders: list[str], telling: set[str], common: str | None,
                weights: dict[str, float], span: Span, where: str, params: list[object], phrases: tuple[str, ...],
                pool: int, average: float, start: int = 0) -> Iterator[list[tuple[Row, int]]]:
    """The candidates (passing the filters, holding every term of `phrases`), with their indexed length, in
    batches of `pool`, best first by a bm25 over what the index knows: whether a record holds a term (weight 1)
    and whether its head does (HEAD_WEIGHT), not how often; times 1 + COVER x the share of the terms' weight
    it holds. They are the records holding one of `finders`, those whose head holds one of `telling`, and, with
    `common` (no term is rare), the POOL newest records holding it. One statement: a UNION ALL of those lists
    in the kind's range, summed per record, joined to its length; SQLite keeps the best `pool`. Every branch
    names its columns: the first one names the union's, and it is not always a finder's."""
    branches: list[str] = []
    values: list[object] = []
    for t in terms:
        w = weights[t]
        if t in finders:
            branches.append("SELECT rowid AS id, ? AS w, ? AS c FROM fts WHERE fts MATCH ? AND rowid > ? AND rowid < ?")
            values += [w, w, match_term(t), *span]
            branches.append("SELECT rowid AS id, ? AS w, 0 AS c FROM fts WHERE fts MATCH ? AND rowid > ? AND rowid < ?")
            values += [w * (relevance.HEAD_WEIGHT - 1), f"head : {match_term(t)}", *span]
        elif t in telling:
            branches.append("SELECT rowid AS id, ? AS w, ? AS c FROM fts WHERE fts MATCH ? AND rowid > ? AND rowid < ?")
            values += [w * relevance.HEAD_WEIGHT, w, f"head : {match_term(t)}", *span]
    if common is not None:
        branches.append("SELECT * FROM (SELECT rowid AS id, ? AS w, ? AS c FROM fts WHERE fts MATCH ? AND rowid > ?"
                        " AND rowid < ?"
                        " ORDER BY rowid DESC LIMIT ?)")
        values += [weights[common], weights[common], match_term(common), *span, pool]
    join, extra = "", list(params)
    if where:
        join = " JOIN docs d ON d.id = m.id"
    if phrases:
        need = [match_term(t) for p in phrases for t in query_terms(Query(phrases=(p,)))]
        where += " AND m.id IN (SELECT rowid FROM fts WHERE fts MATCH ? AND rowid > ? AND rowid < ?)"
        extra += [" AND ".join(dict.fromkeys(need)), *span]
    total = sum(weights[t] for t in terms)
    norm = relevance.K1 * relevance.B / max(average, 1.0)
    sql = (f"SELECT m.id, l.n, sum(m.w) * (1 + ? * sum(m.c) / ?) / (? + ? * l.n) AS s FROM ({' UNION ALL '.join(branches)}) m"
           f" JOIN lengths l ON l.id = m.id{join} WHERE 1{where} GROUP BY m.id ORDER BY s DESC, m.id LIMIT ? OFFSET ?")
    head = [relevance.COVER, total, 1 + relevance.K1 * (1 - relevance.B), norm]
    seen = start
    while True:
        got = conn.execute(sql, [*head, *values, *extra, pool, seen]).fetchall()
        seen += len(got)
        if not got:
            return
        length = {i: n for i, n, _ in got}
        order = {i: at for at, (i, _, _) in enumerate(got)}
        rows = conn.execute(f"SELECT {COLUMNS}, d.id FROM docs d WHERE d.id IN ({', '.join('?' * len(got))})",
                            list(length)).fetchall()
        rows.sort(key=lambda r: order[r[-1]])
        yield [(to_row(r), int(length[r[-1]])) for r in rows]
        if len(got) < pool:
            return


def _folded(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(" ".join(t.split()).casefold() for t in texts)


def _in_time(date: str, when: tuple[str, ...]) -> bool:
    return bool(when) and when[0] <= date[:10] <= when[1]


class _Stats:
    """What the ranking asks of the whole index, each asked at most once in a read transaction: the number of
    records and their average length (kept in `totals` by triggers on `lengths`: counting them took a scan of
    every record's length), a term's number of records, and the range of a kind's ids."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._sizes: tuple[int, float] | None = None
        self._df: dict[str, int] = {}
        self._spans: dict[str, Span | None] = {}

    def span(self, kind: str) -> Span | None:
        if kind not in self._spans:
            self._spans[kind] = kind_span(self.conn, kind)
        return self._spans[kind]

    def sizes(self) -> tuple[int, float]:
        if self._sizes is None:
            n, length = self.conn.execute("SELECT records, length FROM totals").fetchone()
            self._sizes = int(n), length / n if n else 0.0
        return self._sizes

    def dated(self, when: tuple[str, ...]) -> int:
        """The records dated within `when` (its first and last day)."""
        stop = (dt.date.fromisoformat(when[1]) + dt.timedelta(days=1)).isoformat()
        return int(self.conn.execute("SELECT count(*) FROM kinds k JOIN docs d ON d.kind = k.kind"
                                     " WHERE d.date >= ? AND d.date < ?", (when[0], stop)).fetchone()[0])

    def df(self, term: str) -> int:
        if term not in self._df:
            self._df[term] = int(self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                                   (match_term(term),)).fetchone()[0])
        return self._df[term]
