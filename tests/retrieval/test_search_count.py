"""kbsync.retrieval.ranking.count: the sessions a query matches, against a count made by hand over the same files (each
record's words and CJK bigrams as the index is given them), and against the ranked list itself."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import pytest

from helpers.retrieval import session_text, sid_for, write
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.records import Record, records_for
from kbsync.retrieval.text import CJK_RUN, Query, parse_query, query_terms, text_tokens
from kbsync.store.workspace import Workspace

WORDS = ("回滚", "锁文件", "发布", "合同", "deploy", "rollback", "lock", "release", "notes", "会议", "周报", "design")
TAGS = ("git", "部署", "ops")
QUERIES = ("回滚", "deploy rollback", "锁", "锁文件 发布", "回滚 tag:git", "deploy since:2025-06 until:2025-06",
           '"release notes"', "rollback 合同 tag:部署", "zzzz", "tag:ops", "的 回滚", "Deploy since:2025-05-10",
           "会议 周报 design lock")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("count")
    (root / ".kbsync").mkdir()
    rng = random.Random(32)
    for i in range(90):
        ts = f"2025-{4 + i % 3:02d}-{1 + i % 28:02d}T{8 + i % 10:02d}:{i % 60:02d}:00+08:00"
        sid, prefix = sid_for(ts, f"s{i}")
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))
        summary = rng.choice(WORDS) if i % 4 == 0 else "总结"
        write(root, f"{prefix}-s{i}.md", session_text(sid, ts, tuple(rng.sample(TAGS, rng.randint(0, 2))), "open",
                                                      summary, body))
    write(root, "memory/facts.md", "# facts\n\n回滚 deploy rollback\n")  # another kind: never counted
    index.rebuild(Workspace(root))
    return root


@pytest.fixture
def conn(root: Path) -> Iterator[db.Connection]:
    c = db.connect(db.db_path(root / ".kbsync"))
    yield c
    c.close()


def _sessions(root: Path) -> list[Record]:
    return [r for p in sorted((root / "sessions").rglob("*.md"))
            for r in records_for(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))]


def _holds(tokens: set[str], term: str) -> bool:
    """Whether a record whose index tokens are `tokens` holds `term` (a lone CJK character is a prefix)."""
    if len(term) == 1 and CJK_RUN.match(term):
        return any(t.startswith(term) for t in tokens)
    return term in tokens


def _matches(r: Record, q: Query) -> bool:
    tokens = set(text_tokens(" ".join([r.title, r.summary, *r.tags]))) | set(text_tokens(r.body))
    terms = query_terms(q) if q.words else ()
    if terms and not any(_holds(tokens, t) for t in terms):
        return False
    if any(not _holds(tokens, t) for p in q.phrases for t in query_terms(Query(phrases=(p,)))):
        return False
    tags = {t.casefold() for t in r.tags}
    return (all(t in tags for t in q.tags) and (not q.since or (bool(r.date) and r.date >= q.since))
            and (not q.until or (bool(r.date) and r.date[:len(q.until)] <= q.until)))


@pytest.mark.parametrize("text", QUERIES)
def test_the_count_is_the_number_of_sessions_holding_a_term(root: Path, conn: db.Connection, text: str) -> None:
    query = parse_query(text)
    by_hand = {r.key for r in _sessions(root) if _matches(r, query)}
    assert ranking.count(conn, query, "session") == len(by_hand)
    ranked = ranking.search(conn, query, "session", 1000, bodies=index.bodies(Workspace(root)))
    if not query.phrases:  # the ranked list is every one of them (a phrase is also checked as written in the text)
        assert {r.key for r in ranked} == by_hand
    else:
        assert {r.key for r in ranked} <= by_hand


def test_the_queries_tell_something_apart(root: Path, conn: db.Connection) -> None:
    """The workspace makes the comparison mean something: counts neither all nor none, filters narrowing."""
    every = len(_sessions(root))
    got = {t: ranking.count(conn, parse_query(t), "session") for t in ("回滚", "回滚 tag:git", "zzzz")}
    assert 0 < got["回滚 tag:git"] < got["回滚"] < every and got["zzzz"] == 0


@pytest.mark.parametrize("text", [q for q in QUERIES if '"' not in q])
def test_windows_list_each_match_once_and_the_first_is_the_search(root: Path, conn: db.Connection,
                                                                   text: str) -> None:
    """Paged window by window, the ranked list holds every matching session once; the first window ranked is
    what the search returns (its candidates are twice what it returns)."""
    query = parse_query(text)
    bodies = index.bodies(Workspace(root))
    listed: list[str] = []
    while got := ranking.window(conn, query, "session", len(listed), 14, bodies=bodies):
        listed += [r.key for r in got]
    assert sorted(listed) == sorted(r.key for r in _sessions(root) if _matches(r, query))
    first = ranking.window(conn, query, "session", 0, 50, bodies=bodies)[:25]
    assert [r.key for r in first] == [r.key for r in ranking.search(conn, query, "session", 25, bodies=bodies)]
