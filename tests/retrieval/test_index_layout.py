"""The search index's layout: no stored text, no positions, deletes that forget, and matches the text confirms."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers.retrieval import keys, make_workspace, session_text, sid_for, write
from kbsync.retrieval import db, index, listing, ranking, search
from kbsync.retrieval.db import sqlite3
from kbsync.retrieval.text import index_text, index_tokens, parse_query
from kbsync.store.workspace import Workspace

TS = "2025-07-01T09:00:00+08:00"


def _session(root: Path, name: str, summary: str, body: str, ts: str = TS) -> str:
    sid, prefix = sid_for(ts, name)
    rel = f"{prefix}-{name}.md"
    write(root, rel, session_text(sid, ts, ("测试",), "open", summary, body))
    return rel


def _built(root: Path, noise: int) -> Workspace:
    """A generated workspace with its search index built."""
    make_workspace(root, noise=noise)
    ws = Workspace(root)
    index.rebuild(ws)
    return ws


def _raw_matches(ws: Workspace, expression: str) -> int:
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        return int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expression,)).fetchone()[0])
    finally:
        conn.close()


def test_the_full_text_table_stores_no_text_and_no_positions(tmp_path: Path) -> None:
    ws = _built(tmp_path, noise=2)
    conn = sqlite3.connect(db.db_path(ws.state_dir))
    try:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    assert "content = ''" in sql and "contentless_delete = 1" in sql and "detail = column" in sql
    assert "fts_content" not in tables


def test_a_changed_or_deleted_file_no_longer_matches_its_old_words(tmp_path: Path) -> None:
    ws = _built(tmp_path, noise=2)
    rel = _session(tmp_path, "水果", "first", "苹果 apple")
    index.update(ws, [rel])
    assert _raw_matches(ws, '"苹果"') == 1 and _raw_matches(ws, '"apple"') == 1
    _session(tmp_path, "水果", "second", "香蕉 banana")
    index.update(ws, [rel])
    assert _raw_matches(ws, '"苹果"') == 0 and _raw_matches(ws, '"apple"') == 0  # in the index itself, not only hidden
    assert keys(ws, "banana") == [rel]
    (tmp_path / rel).unlink()
    index.update(ws, [rel])
    assert _raw_matches(ws, '"香蕉"') == 0 and _raw_matches(ws, '"banana"') == 0 and keys(ws, "香蕉") == []


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, dict[str, str]]:
    """Records holding 合同风险, and records holding its bigrams (合同 同风 风险) only apart, in head and body."""
    root = tmp_path_factory.mktemp("apart")
    made = {
        "head-run": _session(root, "甲", "合同风险梳理", "无关内容", "2025-07-01T09:00:00+08:00"),
        "head-apart": _session(root, "乙", "合同很多 同风格 风险低", "无关内容", "2025-07-02T09:00:00+08:00"),
        "body-run": _session(root, "丙", "周报", "本周处理合同风险。", "2025-07-03T09:00:00+08:00"),
        "body-apart": _session(root, "丁", "周报", "合同已签，同风格的文档，风险可控。", "2025-07-04T09:00:00+08:00"),
        "split": _session(root, "戊", "合同很多", "同风格 风险可控", "2025-07-05T09:00:00+08:00"),
    }
    ws = Workspace(root)
    index.rebuild(ws)
    return ws, made


def _names(made: dict[str, str], rows: list[db.Row]) -> list[str]:
    by_key = {v: k for k, v in made.items()}
    return [by_key[r.key] for r in rows]


def _search(ws: Workspace, text: str) -> list[db.Row]:
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        return ranking.search(conn, parse_query(text), "session", 10, bodies=index.bodies(ws))
    finally:
        conn.close()


def test_a_quoted_cjk_run_is_found_only_where_it_stands_whole(apart: tuple[Workspace, dict[str, str]]) -> None:
    ws, made = apart
    assert _raw_matches(ws, '"合同" AND "同风" AND "风险"') == 5  # the index alone cannot tell them apart
    assert _names(made, _search(ws, '"合同风险"')) == ["head-run", "body-run"]  # the head first


def test_an_unquoted_cjk_run_matches_any_of_its_bigrams(apart: tuple[Workspace, dict[str, str]]) -> None:
    ws, made = apart
    names = _names(made, _search(ws, "合同风险"))
    assert set(names) == set(made)  # each holds some of 合同 同风 风险
    assert names[0] == "head-run"  # all three in the title


def test_a_listing_keeps_only_records_holding_the_run(apart: tuple[Workspace, dict[str, str]]) -> None:
    ws, made = apart
    rows = listing.list_sessions(ws, parse_query("合同风险"), 10)
    assert _names(made, rows) == ["body-run", "head-run"]  # newest first
    first = listing.list_sessions(ws, parse_query("合同风险"), 1)
    rest = listing.list_sessions(ws, parse_query("合同风险"), 10, (first[0].date, first[0].key))
    assert _names(made, first + rest) == ["body-run", "head-run"]


def test_the_check_reads_the_file_as_it_is_now(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    rel = _session(tmp_path, "己", "周报", "本周处理合同风险。")
    index.rebuild(ws)
    write(tmp_path, rel, (tmp_path / rel).read_text(encoding="utf-8").replace("合同风险", "合同，同风，风险"))
    assert keys(ws, '"合同风险"') == []  # not yet re-indexed: the index still holds the bigrams; the file no longer the run
    assert keys(ws, "合同风险") == [rel]  # unquoted, the bigrams are enough


def test_short_cjk_and_english_queries_need_no_check(apart: tuple[Workspace, dict[str, str]]) -> None:
    ws, made = apart
    assert set(keys(ws, "同风")) == set(made.values())  # 合同风险 holds it too
    assert set(keys(ws, "低")) == {made["head-apart"]}  # a run's last character
    rel = made["body-run"]
    assert keys(ws, "本周") == [rel]


def test_an_older_database_is_rebuilt_on_open(tmp_path: Path) -> None:
    path = tmp_path / db.DB_NAME
    old = sqlite3.connect(path)
    old.executescript("CREATE TABLE docs (id INTEGER PRIMARY KEY, key TEXT);"
                      "CREATE VIRTUAL TABLE fts USING fts5(kind, head, body); PRAGMA user_version = 3;")
    old.close()
    conn = db.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()[0]
    finally:
        conn.close()
    assert "detail = column" in sql


def test_a_build_on_every_core_writes_what_a_serial_build_writes(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    make_workspace(tmp_path, noise=450)  # past parallel.MIN_PARALLEL files
    ws = Workspace(tmp_path)

    def dump() -> list[tuple[object, ...]]:
        conn = db.connect(db.db_path(ws.state_dir))
        try:
            return conn.execute("SELECT d.id, d.key, d.title, d.flags, l.n FROM docs d JOIN lengths l ON l.id = d.id"
                                " ORDER BY d.id").fetchall()
        finally:
            conn.close()

    monkeypatch.setenv("KBSYNC_WORKERS", "2")
    index.rebuild(ws)
    parallel_rows = dump()
    monkeypatch.setenv("KBSYNC_WORKERS", "1")
    index.rebuild(ws)
    assert dump() == parallel_rows and len(parallel_rows) > 450


def test_the_totals_the_ranking_reads_follow_every_write(tmp_path: Path) -> None:
    ws = _built(tmp_path, noise=3)
    rel = _session(tmp_path, "水果", "first", "苹果 apple")
    index.update(ws, [rel])
    _session(tmp_path, "水果", "second", "香蕉 banana and a longer body than before")
    index.update(ws, [rel])
    other = _session(tmp_path, "蔬菜", "third", "白菜")
    index.update(ws, [other])
    (tmp_path / other).unlink()
    index.update(ws, [other])
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        counted = conn.execute("SELECT count(*), sum(n) FROM lengths").fetchone()
        kept = conn.execute("SELECT records, length FROM totals").fetchone()
    finally:
        conn.close()
    assert counted[0] > 0 and tuple(kept) == tuple(counted)


TOKEN_TEXTS = (
    "合同风险梳理：合同违约金过高，合同风险可控。合同",
    "deploy the deploy pipeline; Deploy again\tand\nagain — café CAFÉ cafe naïve",
    "アイ・ウエ ア・イ 漢字かな交じり文、한국어 문장 한국어",
    "mixed合同deploy合同 x合y 合 同\u3000全角\u00a0nbsp\u2028line\u2029para\x1cfs\x85nel",
    "",
    "   \n\t ",
    "a\u0301b \U0001f600 emoji 😀 x_y x-y 3.14 3,14",
)


def test_the_index_given_each_bigram_once_holds_what_the_whole_text_gives(tmp_path: Path) -> None:
    """Each bigram once (`index_tokens`) is what the index stores for the text rewritten whole (`index_text`):
    the same (token, record, column) triples, the same length."""
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    for name in ("whole", "once"):
        conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(head, body, content = '', detail = column,"
                     " tokenize = 'unicode61 remove_diacritics 2')")
        conn.execute(f"CREATE VIRTUAL TABLE {name}_v USING fts5vocab({name}, instance)")
    for i, text in enumerate(TOKEN_TEXTS):
        head = TOKEN_TEXTS[-1 - i]
        conn.execute("INSERT INTO whole (rowid, head, body) VALUES (?, ?, ?)", (i + 1, index_text(head), index_text(text)))
        conn.execute("INSERT INTO once (rowid, head, body) VALUES (?, ?, ?)",
                     (i + 1, index_tokens(head)[0], index_tokens(text)[0]))
        assert index_tokens(text)[1] == len(index_text(text))
    triples = ["SELECT term, doc, col FROM whole_v ORDER BY 1, 2, 3", "SELECT term, doc, col FROM once_v ORDER BY 1, 2, 3"]
    whole, once = (conn.execute(sql).fetchall() for sql in triples)
    conn.close()
    assert whole == once and len(whole) > 40


def test_each_kind_keeps_to_its_own_range_of_ids(tmp_path: Path) -> None:
    """A kind's search reads only its range of ids: records of every kind put in one after another, by a
    rebuild and by updates, each land in their kind's range, and a word they all hold finds each kind's own."""
    ws = _built(tmp_path, noise=2)
    made = {"session": [_session(tmp_path, "斑马", "斑马鱼 first", "zebrafish one")]}
    for kind, rel in (("memory", "memory/斑马.md"), ("artifact", "artifacts/2025-07-01/斑马.md")):
        write(tmp_path, rel, "# 斑马鱼\n\nzebrafish notes\n")
        made[kind] = [rel]
        index.update(ws, made["session"] + [rel])
    made["session"].append(_session(tmp_path, "斑马二", "斑马鱼 second", "zebrafish two"))
    index.update(ws, made["session"][1:])
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        for kind in ("session", "board", "memory", "artifact"):
            span = db.kind_span(conn, kind)
            assert span is not None and span[1] - span[0] == db.KIND_SPAN
            ids = [i for (i,) in conn.execute("SELECT id FROM docs WHERE kind = ?", (kind,))]
            assert ids and all(span[0] < i < span[1] for i in ids), kind
            assert conn.execute("SELECT count(*) FROM docs WHERE id > ? AND id < ?", span).fetchone()[0] == len(ids)
        for kind, rels in made.items():
            got = ranking.search(conn, parse_query("zebrafish"), kind, 10, bodies=index.bodies(ws))
            assert sorted(r.relpath for r in got) == sorted(rels), kind
        assert db.kind_span(conn, "folder:none") is None
        assert ranking.search(conn, parse_query("zebrafish"), "folder:none", 10, bodies=index.bodies(ws)) == []
    finally:
        conn.close()


def test_an_index_of_an_older_layout_is_built_anew_before_a_search(tmp_path: Path) -> None:
    """An upgrade of kbsync finds the index of the version before: the first search builds it whole (it
    found nothing before, an empty index made in place of the old one)."""
    ws = _built(tmp_path, noise=2)
    rel = _session(tmp_path, "旧版", "旧版索引", "legacylayout words")
    index.update(ws, [rel])
    assert [h.path for h in search.federated(ws, "legacylayout").results] == [rel]
    path = db.db_path(ws.state_dir)
    made = path.with_name("older.sqlite")  # what the version before left: another file in its place
    shutil.copyfile(path, made)
    old = sqlite3.connect(made)
    old.execute("DELETE FROM docs")
    old.commit()
    old.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION - 1}")
    old.close()
    assert db.needs_build(made)
    os.replace(made, path)
    assert index.flagged(ws) == []  # a read that never builds leaves the old one for the search to replace
    got = search.federated(ws, "legacylayout")
    assert [h.path for h in got.results] == [rel] and not got.failures
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    finally:
        conn.close()
    path.unlink()
    path.write_bytes(b"")  # an empty file: no index either
    assert [h.path for h in search.federated(ws, "legacylayout").results] == [rel]
