"""The search ranks in FTS alone and reads only the records it keeps: the same lists as one ORDER BY bm25, key
over every match joined to its record, whatever the filters and however the equal scores fall across batches."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from helpers.retrieval import session_text, sid_for, write
from kbsync.retrieval import db as searchdb
from kbsync.retrieval import index as searchindex
from kbsync.retrieval.text import Query, fts_expression, fts_parts, parse_query
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
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[searchdb.Connection]:
    root = tmp_path_factory.mktemp("ties")
    ws = Workspace(root)
    _BODIES.append(searchindex.bodies(ws))
    searchindex.rebuild(ws)
    made = sorted(_sessions(root), reverse=True)
    searchindex.update(ws, made)  # indexed in reverse key order: equal scores come from FTS against key order
    c = searchdb.connect(searchdb.db_path(root / ".kbsync"))
    yield c
    c.close()


_BODIES: list[searchdb.Bodies] = []  # the fixture's workspace's


def _search(conn: searchdb.Connection, query: Query, limit: int) -> list[searchdb.Row]:
    return searchdb.search(conn, query, "session", limit, bodies=_BODIES[-1])


def _one_statement(conn: searchdb.Connection, query: Query, limit: int) -> list[tuple[str, float]]:
    """The order the search promises, as one statement per tier: head matches, then body-only matches, each by
    score then key, the filters applied to every match."""
    where, params = searchdb._filters(query)
    match, parts = fts_expression(query.terms), fts_parts(query.terms)
    out: list[tuple[str, float]] = []
    every = (0, 2 ** 63 - 1)  # every id: the kind is the filter d.kind, not its range
    for expression, stats in ((f"head : ({match})", None), (f"({match}) NOT head : ({match})", searchdb._Stats(conn))):
        ranked, values = searchdb._ranked(expression, every, parts, stats)
        sql = (f"SELECT d.key, r.score FROM ({ranked}) r JOIN docs d ON d.id = r.id WHERE d.kind = 'session'{where}"
               " ORDER BY r.score, d.key LIMIT ?")
        out += conn.execute(sql, [*values, *params, max(0, limit - len(out))]).fetchall()
    return out


def test_the_corpus_has_equal_scores_across_a_batch(conn: searchdb.Connection) -> None:
    ranked = _one_statement(conn, parse_query("合同"), 90)
    scores = [s for _, s in ranked]
    assert len(scores) > 40 and any(scores[i] == scores[i + 1] for i in range(1, 3))  # ties at the first batch's end


@pytest.mark.parametrize("batch", [2, 16])
@pytest.mark.parametrize("text", QUERIES)
def test_batched_ranking_is_the_one_statement_order(conn: searchdb.Connection, monkeypatch: pytest.MonkeyPatch,
                                                    text: str, batch: int) -> None:
    monkeypatch.setattr(searchdb, "FIRST_BATCH", batch)
    query = parse_query(text)
    for limit in (1, 2, 3, 5, 8, 13, 40, 100):
        expected = [k for k, _ in _one_statement(conn, query, limit)]
        assert [r.key for r in _search(conn, query, limit)] == expected, (text, limit)


def test_a_rare_filter_is_found_past_many_batches(conn: searchdb.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(searchdb, "FIRST_BATCH", 1)
    got = _search(conn, parse_query("tag:罕见 合同"), 20)
    assert len(got) == 6 and all("罕见" in r.tags for r in got)


def test_no_read_transaction_is_left_open(conn: searchdb.Connection) -> None:
    _search(conn, parse_query("合同"), 5)
    assert not conn.in_transaction
