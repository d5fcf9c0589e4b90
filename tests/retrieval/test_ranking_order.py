"""The search's list is every record holding any of the query's terms (and passing its filters), ranked by
kbsync.retrieval.relevance over its text, ties by key: the same list as scoring every record one by one, whatever
the filters, however many records share a score, and however small the candidate pool is against the matches."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from helpers.retrieval import session_text, sid_for, write
from kbsync.retrieval import db, index, ranking, relevance
from kbsync.retrieval.text import Query, parse_query, query_terms
from kbsync.store.workspace import Workspace

QUERIES = ("合同", "付款", "合同 付款", "rollback", "tag:法务 合同", "status:open 合同", "tag:罕见 合同",
           "since:2025-03-01 until:2025-03-31 付款", "status:open rollback", "tag:罕见 rollback")


def _sessions(root: Path) -> list[str]:
    """Many sessions of the same length (so many equal bm25 scores), the words in the head of some and only in
    the body of others, a tag that only a few late-ranked ones carry."""
    made = []
    for i in range(90):
        ts = f"2025-{1 + i % 6:02d}-{1 + i % 28:02d}T09:{i % 60:02d}:00+08:00"
        sid, prefix = sid_for(ts, f"s{i}")
        head = "合同 付款" if i % 3 == 0 else "评审"
        body = ("合同 rollback " if i % 2 else "付款 rollback ") + "会议 " * (i % 4)
        tags = ("法务", "罕见") if i > 80 else ("法务",) if i % 5 == 0 else ("周报",)
        made.append(f"{prefix}-s{i}.md")
        write(root, made[-1], session_text(sid, ts, tags, "open" if i % 4 else "closed", head, body))
    return made


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[db.Connection]:
    root = tmp_path_factory.mktemp("ties")
    ws = Workspace(root)
    _BODIES.append(index.bodies(ws))
    index.rebuild(ws)
    made = sorted(_sessions(root), reverse=True)
    index.update(ws, made)  # indexed in reverse key order: equal scores come from FTS against key order
    c = db.connect(db.db_path(root / ".kbsync"))
    yield c
    c.close()


_BODIES: list[db.Bodies] = []  # the fixture's workspace's


def _search(conn: db.Connection, query: Query, limit: int) -> list[db.Row]:
    return ranking.search(conn, query, "session", limit, bodies=_BODIES[-1])


def _brute_force(conn: db.Connection, query: Query, limit: int) -> list[str]:
    """The promised order, computed record by record: each session passing the filters that holds a term, scored
    by relevance.score over its head and its file's body."""
    where, params = db.filters(query)
    records, length = conn.execute("SELECT records, length FROM totals").fetchone()
    average = length / records
    terms = [t for t in query_terms(query)
             if conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{t}"',)).fetchone()[0]]
    weights = {t: relevance.idf(records, conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                                      (f'"{t}"',)).fetchone()[0]) for t in terms}
    sql = f"SELECT {db.COLUMNS}, l.n FROM docs d JOIN lengths l ON l.id = d.id WHERE d.kind = 'session'{where}"
    scored = []
    for r in conn.execute(sql, params).fetchall():
        row = db.to_row(r[:-1])
        body = _BODIES[-1]([row]).get(row.key, "")
        head = (row.title, row.summary, *row.tags)
        if not any(t in (" ".join(head) + " " + body).casefold() for t in terms):
            continue
        got = relevance.score(terms, weights, head, body, r[-1] / average)
        scored.append((-got.score, row.key))
    return [k for _, k in sorted(scored)[:limit]]


def test_the_corpus_has_equal_scores(conn: db.Connection) -> None:
    ranked = sorted(_search(conn, parse_query("合同"), 90), key=lambda r: r.score)
    assert len(ranked) > 40 and any(ranked[i].score == ranked[i + 1].score for i in range(len(ranked) - 1))


@pytest.mark.parametrize("text", QUERIES)
def test_the_ranking_is_the_record_by_record_order(conn: db.Connection, monkeypatch: pytest.MonkeyPatch,
                                                   text: str) -> None:
    monkeypatch.setattr(ranking, "CANDIDATES", 100)  # every match is read and ranked
    query = parse_query(text)
    for limit in (1, 2, 3, 5, 8, 13, 40, 100):
        assert [r.key for r in _search(conn, query, limit)] == _brute_force(conn, query, limit), (text, limit)


@pytest.mark.parametrize("text", QUERIES)
def test_a_small_candidate_pool_still_fills_the_page(conn: db.Connection, monkeypatch: pytest.MonkeyPatch,
                                                     text: str) -> None:
    monkeypatch.setattr(ranking, "CANDIDATES", 1)
    query = parse_query(text)
    assert len(_search(conn, query, 13)) == len(_brute_force(conn, query, 13))


def test_a_rare_filter_is_found_among_many_matches(conn: db.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "CANDIDATES", 1)
    got = _search(conn, parse_query("tag:罕见 合同"), 20)
    assert len(got) == 6 and all("罕见" in r.tags for r in got)


def test_no_read_transaction_is_left_open(conn: db.Connection) -> None:
    _search(conn, parse_query("合同"), 5)
    assert not conn.in_transaction
