"""Recall and ranking on a labelled set; the search index through add/change/delete/rename; the CLI."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Iterator

import pytest

from helpers.cli import Cli
from helpers.retrieval import (
    LABELLED,
    PLANTED,
    assert_index_matches_rebuild,
    keys,
    make_workspace,
    noise_session,
    session_text,
    sid_for,
    write,
)
from kbsync import parallel
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.db import sqlite3
from kbsync.retrieval.text import index_text, parse_query, query_terms
from kbsync.store.workspace import Workspace


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("ws")
    names = make_workspace(root)
    index.rebuild(Workspace(root))
    return root, names


@pytest.fixture
def conn(planted: tuple[Path, dict[str, str]]) -> Iterator[db.Connection]:
    c = db.connect(db.db_path(planted[0] / ".kbsync"))
    yield c
    c.close()


def found(conn: db.Connection, planted: tuple[Path, dict[str, str]], query: str, kind: str,
          limit: int = 10) -> list[str]:
    by_key = {v: k for k, v in planted[1].items()}
    bodies = index.bodies(Workspace(planted[0]))
    return [by_key.get(r.key, r.key) for r in ranking.search(conn, parse_query(query), kind, limit, bodies=bodies)]


@pytest.mark.parametrize("query,kind,expected", LABELLED, ids=[f"{k}:{q}" for q, k, _ in LABELLED])
def test_labelled_query_ranks_its_records_first(conn: db.Connection, planted: tuple[Path, dict[str, str]],
                                                query: str, kind: str, expected: frozenset[str]) -> None:
    """Every relevant record, ahead of every other; a query of one term (or of filters alone) finds nothing else,
    one of several terms may find records holding only some of them, after the relevant ones."""
    got = found(conn, planted, query, kind)
    assert set(got[:len(expected)]) == expected
    if len(query_terms(parse_query(query))) <= 1:
        assert set(got) == expected


def test_ranking_prefers_title_and_summary_over_body(conn: db.Connection,
                                                      planted: tuple[Path, dict[str, str]]) -> None:
    assert found(conn, planted, "合同", "session")[0] == "P1"
    assert found(conn, planted, "rollback", "session")[0] == "P5"  # in the summary, not only the body
    assert found(conn, planted, "数据迁移", "session") == ["P4"]


def test_filters_without_words_list_newest_first(conn: db.Connection,
                                                 planted: tuple[Path, dict[str, str]]) -> None:
    assert found(conn, planted, "tag:法务", "session") == ["P2", "P1"]


def test_plain_unicode61_misses_two_character_words(planted: tuple[Path, dict[str, str]]) -> None:
    """The reason for bigrams: without them, 合同 inside a sentence is never found."""
    root = planted[0]
    texts = {p.name: (root / planted[1][p.name]).read_text(encoding="utf-8") for p in PLANTED}
    fts = sqlite3.connect(":memory:")
    fts.execute("CREATE VIRTUAL TABLE plain USING fts5(name, body)")
    fts.execute("CREATE VIRTUAL TABLE grams USING fts5(name, body)")
    for name, text in texts.items():
        fts.execute("INSERT INTO plain VALUES (?, ?)", (name, text))
        fts.execute("INSERT INTO grams VALUES (?, ?)", (name, index_text(text)))
    plain = {r[0] for r in fts.execute("SELECT name FROM plain WHERE plain MATCH '\"合同\"'")}
    grams = {r[0] for r in fts.execute("SELECT name FROM grams WHERE grams MATCH '\"合同\"'")}
    assert grams == {"P1", "P2"} and plain < grams


# ---- consistency through add / change / delete / rename ---------------------------

def test_index_follows_add_change_delete_rename(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, noise=5)
    ws = Workspace(root)
    index.rebuild(ws)
    ts = "2025-07-01T09:00:00+08:00"
    sid, prefix = sid_for(ts, "new")
    rel = f"{prefix}-新会话.md"
    write(root, rel, session_text(sid, ts, ("新",), "open", "first", "苹果 apple"))
    assert index.update(ws, [rel]) == 1
    assert keys(ws, "苹果") == [rel]

    write(root, rel, session_text(sid, ts, ("新",), "open", "second", "香蕉 banana"))
    index.update(ws, [rel])
    assert keys(ws, "苹果") == [] and keys(ws, "banana") == [rel]

    renamed = f"{prefix}-改名.md"
    (root / rel).rename(root / renamed)
    index.update(ws, [rel, renamed])
    assert keys(ws, "香蕉") == [renamed]

    (root / renamed).unlink()
    index.update(ws, [renamed])
    assert keys(ws, "香蕉") == []
    assert_index_matches_rebuild(ws)


def test_refresh_catches_edits_made_while_nobody_watched(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    names = make_workspace(root, noise=5)
    ws = Workspace(root)
    index.rebuild(ws)
    p1 = root / names["P1"]
    p1.write_text(p1.read_text(encoding="utf-8").replace("违约金", "西瓜"), encoding="utf-8")
    (root / names["P7"]).unlink()
    assert index.refresh(ws) == 2
    assert keys(ws, "西瓜") == [names["P1"]] and keys(ws, "发票") == []
    assert index.refresh(ws) == 0
    assert_index_matches_rebuild(ws)


def test_an_update_of_many_files_prepares_them_on_every_core_and_writes_what_a_rebuild_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull hands the index thousands of files at once: they are prepared by worker processes (the pool
    is used: a changed file, a new one, a deleted one and an unindexed one among them) and the index ends as
    a rebuild makes it."""
    root = tmp_path / "ws"
    names = make_workspace(root, noise=parallel.MIN_PARALLEL + 20)
    ws = Workspace(root)
    index.rebuild(ws)
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    used: list[int] = []
    real = parallel._Pool.run
    monkeypatch.setattr(parallel._Pool, "run", lambda self: used.append(self.n) or real(self))
    every = sorted(str(p.relative_to(root)) for p in root.glob("sessions/*/*.md"))
    for i, rel in enumerate(every):  # every one changed: those indexed as they stand are not prepared again
        path = root / rel
        path.write_text(path.read_text(encoding="utf-8") + ("\n批量更新 bulkpulled\n" if i % 3 == 0 else "\n批量更新\n"),
                        encoding="utf-8")
    (root / names["P7"]).unlink()
    added = noise_session(root, random.Random(3), 9999)
    got = index.update(ws, [*every, added, "logs/errors.md", added])  # a path given twice counts once
    assert used == [2]
    assert got == len(every)  # every session but the deleted one, and the new one; the log is not indexed
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        found = ranking.search(conn, parse_query("bulkpulled"), "session", 1000, bodies=index.bodies(ws))
    finally:
        conn.close()
    assert sorted(r.relpath for r in found) == sorted(set(every[::3]) - {names["P7"]})
    assert_index_matches_rebuild(ws)


def test_deleting_the_index_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    names = make_workspace(root, noise=5)
    ws = Workspace(root)
    index.rebuild(ws)
    db.db_path(ws.state_dir).unlink()
    assert keys(ws, "发票") == [names["P7"]]


# ---- the command line ---------------------------------------------------------------

def test_search_json_output(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    root, names = planted
    out = cli("search", "rollback", "--json", ws=root)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert {r["key"] for r in results} == {names["P4"], names["P5"], names["B2"]}
    first = results[0]
    assert set(first) >= {"key", "title", "sources", "score", "path"}
    assert all(len(r.get("summary", "")) <= 100 for r in results)
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_search_is_deterministic_and_text_output_names_sources(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    root, names = planted
    a, b = cli("search", "合同", ws=root), cli("search", "合同", ws=root)
    assert a.returncode == 0 and a.stdout == b.stdout
    assert "[sessions]" in a.stdout and "[board]" in a.stdout and names["P1"] in a.stdout


def test_no_hits_is_exit_1_and_empty(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    out = cli("search", "zzzyyyxxx", "--json", ws=planted[0])
    assert out.returncode == 1 and json.loads(out.stdout) == []


def test_unknown_source_and_bad_date_are_usage_errors(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    assert cli("search", "合同", "--source", "nope", ws=planted[0]).returncode == 2
    bad = cli("search", "since:yesterday", ws=planted[0])
    assert bad.returncode == 2 and "since:yesterday" in bad.stderr and "Traceback" not in bad.stderr


def test_source_option_limits_the_sources(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    out = cli("search", "合同", "--source", "board", "--json", ws=planted[0])
    assert {s for r in json.loads(out.stdout) for s in r["sources"]} == {"board"}


# ---- configured sources: folders and commands ---------------------------------------

GOOD = """import json, sys
print(json.dumps({"title": "外部: " + sys.argv[3], "url": "http://kb.example/1", "summary": "x" * 300}))
print(json.dumps({"title": "same as P5", "path": sys.argv[1]}))
"""
SCRIPTS = {
    "good": GOOD,
    "fails": "import sys\nsys.stderr.write('backend down\\n')\nsys.exit(3)\n",
    "hangs": "import time\ntime.sleep(60)\n",
    "garbage": "print('<html>not json</html>')\n",
    "nofields": "print('{\"title\": \"no key\"}')\n",
}


def configure(root: Path, tmp: Path, names: dict[str, str], *, extra: str = "") -> None:
    lines = ['[[search.sources]]\nname = "sessions"\nkind = "sessions"\n']
    for name, body in SCRIPTS.items():
        script = tmp / f"{name}.py"
        script.write_text(body, encoding="utf-8")
        cmd = [sys.executable, str(script), names["P5"], "--", "{query}"]
        lines.append(f'[[search.sources]]\nname = "{name}"\nkind = "command"\ncommand = {json.dumps(cmd)}\n'
                     f"timeout_s = 1.5\n")
    (root / ".kbsync").mkdir(exist_ok=True)
    (root / ".kbsync/config.toml").write_text("\n".join(lines) + extra, encoding="utf-8")


def test_command_sources_that_fail_hang_or_print_garbage_are_left_out(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    names = make_workspace(root, noise=5)
    configure(root, tmp_path, names)
    out = cli("search", "rollback", "--json", ws=root)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    by_key = {r["key"]: r for r in results}
    assert by_key[names["P5"]]["sources"] == ["sessions", "good"]  # the same item from two sources
    assert results[0]["key"] == names["P5"]
    ext = by_key["http://kb.example/1"]
    assert ext["url"] == "http://kb.example/1" and len(ext["summary"]) <= 100 and ext["sources"] == ["good"]
    for name, why in (("fails", "backend down"), ("hangs", "timed out"), ("garbage", "not JSON"),
                      ("nofields", "key, path, url")):
        assert f"search source {name} left out" in out.stderr and why in out.stderr


def test_folder_source_is_searched_and_kept_up_to_date(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    make_workspace(root, noise=5)
    notes = tmp_path / "notes"
    write(notes, "a/合同模板.md", "# 合同模板\n\n标准合同条款。\n")
    (root / ".kbsync").mkdir(exist_ok=True)
    (root / ".kbsync/config.toml").write_text(
        f'[[search.sources]]\nname = "notes"\nkind = "folder"\npath = "{notes}"\n', encoding="utf-8")
    first = json.loads(cli("search", "合同", "--json", ws=root).stdout)
    assert [(r["title"], r["path"]) for r in first] == [("合同模板", str(notes / "a/合同模板.md"))]
    (notes / "a/合同模板.md").unlink()
    assert cli("search", "合同", ws=root).returncode == 1


def test_bad_source_config_is_a_config_error(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    make_workspace(root, noise=1)
    (root / ".kbsync").mkdir(exist_ok=True)
    (root / ".kbsync/config.toml").write_text('[[search.sources]]\nname = "x"\nkind = "ftp"\n', encoding="utf-8")
    out = cli("search", "合同", ws=root)
    assert out.returncode == 2 and "search.sources[0]" in out.stderr


def test_index_rebuild_search_command(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    names = make_workspace(root, noise=3)
    out = cli("index", "rebuild", "--search", ws=root)
    assert out.returncode == 0 and "records" in out.stdout, out.stderr
    assert keys(Workspace(root), "发票") == [names["P7"]]


def test_a_hanging_wrapper_with_a_child_is_stopped_whole(tmp_path: Path) -> None:
    """A shell wrapper whose child keeps the output pipe open must not outlive its timeout."""
    import time

    from kbsync.errors import KbsyncError
    from kbsync.retrieval.sources.command import run_bounded

    start = time.monotonic()
    with pytest.raises(KbsyncError, match="timed out"):
        run_bounded(["sh", "-c", "sleep 30; echo late"], 0.5, cwd=tmp_path)
    assert time.monotonic() - start < 10


def test_an_unreadable_search_database_says_how_to_rebuild(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    names = make_workspace(root, noise=2)
    (root / ".kbsync").mkdir(exist_ok=True)
    (root / ".kbsync" / "search.sqlite").write_bytes(b"not a database" * 100)
    out = cli("search", "发票", ws=root)
    assert out.returncode == 1 and "index rebuild --search" in out.stderr and "Traceback" not in out.stderr
    assert cli("index", "rebuild", "--search", ws=root).returncode == 0
    assert keys(Workspace(root), "发票") == [names["P7"]]


def test_an_empty_query_is_a_usage_error(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    out = cli("search", " ", ws=planted[0])
    assert out.returncode == 2 and "nothing to search for" in out.stderr


def test_two_machines_with_the_same_files_return_the_same_lists(tmp_path: Path) -> None:
    """One index built in one go, the other file by file in reverse order: same fused lists."""
    from kbsync.retrieval.search import federated

    a, b = tmp_path / "a", tmp_path / "b"
    make_workspace(a, noise=60)
    shutil.copytree(a, b)
    wa, wb = Workspace(a), Workspace(b)
    index.rebuild(wa)
    index.update(wb, [])  # the first update builds; then every file again, newest first
    index.update(wb, sorted(wb.iter_files(), reverse=True))
    for query in ["合同", "风险", "rollback", "tag:法务", "status:closed", "周报", "design"]:
        ra = [(r.key, r.score, r.sources) for r in federated(wa, query).results]
        rb = [(r.key, r.score, r.sources) for r in federated(wb, query).results]
        assert ra == rb, query


def test_top_and_source_filter(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    root, names = planted
    one = json.loads(cli("search", "rollback", "--top", "1", "--json", ws=root).stdout)
    assert [r["key"] for r in one] == [names["P5"]]
    only = json.loads(cli("search", "source:board", "--json", ws=root).stdout)
    assert {r["key"] for r in only} == {names["B1"], names["B2"]}
