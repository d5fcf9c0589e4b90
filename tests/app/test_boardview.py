"""app.boardview: a board of thousands is shown a page at a time, and a change to the file is seen at once
although a parse is kept between views."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from helpers.board import entry
from helpers.cli import Cli
from kbsync.app import boardview
from kbsync.app.workspace import open_workspace
from kbsync.core import board as coreboard
from kbsync.store.workspace import Workspace

NOW = dt.datetime(2025, 9, 15, tzinfo=dt.timezone.utc)
BOARD = "LEARNING_BOARD.md"


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    return open_workspace(str(ws_root), None)


def fill(ws: Workspace, n: int) -> None:
    text = ws.read_text(BOARD)
    for i in range(n):
        text = coreboard.upsert(text, entry(title=f"经验 {i:03d}", source_date=f"2025-01-{1 + i % 28:02d}"))[0]
    (ws.root / BOARD).write_text(text, encoding="utf-8")


def test_entries_and_decay_candidates_come_a_page_at_a_time(ws: Workspace) -> None:
    fill(ws, 2 * boardview.PAGE_SIZE + 7)
    first = boardview.view(ws, boardview.Filters(), NOW)
    assert (first.matched, first.page, first.pages, len(first.rows)) == (107, 1, 3, boardview.PAGE_SIZE)
    last = boardview.view(ws, boardview.Filters(page=9), NOW)  # past the end: the last page
    assert (last.page, len(last.rows)) == (3, 7)
    seen = {r.entry.key for p in (1, 2, 3) for r in boardview.view(ws, boardview.Filters(page=p), NOW).rows}
    assert len(seen) == 107
    assert first.decay_total == 107 and len(first.decay) == boardview.PAGE_SIZE and first.decay_pages == 3
    assert len(boardview.view(ws, boardview.Filters(decay_page=3), NOW).decay) == 7


def test_a_change_to_the_board_is_seen_by_the_next_view(ws: Workspace) -> None:
    fill(ws, 3)
    assert boardview.view(ws, boardview.Filters(), NOW).matched == 3
    path = ws.root / BOARD
    before = path.stat()
    text = path.read_text(encoding="utf-8").replace("经验 000", "经验 999")  # same size, same mtime
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "经验 999" in {r.entry.title for r in boardview.view(ws, boardview.Filters(), NOW).rows}
    fill(ws, 5)
    assert boardview.view(ws, boardview.Filters(), NOW).matched == 6


def test_the_board_page_links_its_pages(ws: Workspace, tmp_path: Path) -> None:
    """Through the real server: page 2 of 3 shows its entries and links both neighbours, filters kept."""
    from helpers.web import WebServer

    fill(ws, 2 * boardview.PAGE_SIZE + 7)
    site = WebServer(ws.root, tmp_path / "home")
    try:
        got = site.http.get(f"{site.url}/board?page=2&sort=helpful", timeout=30,
                            headers={"Authorization": f"Bearer {site.token}"})
    finally:
        site.stop()
    assert got.status_code == 200, got.text
    page = got.text
    assert "Page 2 of 3" in page and page.count('class="card"') == boardview.PAGE_SIZE
    assert 'rel="prev" href="/board?sort=helpful"' in page
    assert 'rel="next" href="/board?sort=helpful&amp;page=3"' in page
    assert 'href="/board?sort=helpful&amp;page=2&amp;decay_page=2"' in page


def test_a_search_counts_every_matching_entry_and_the_doors_agree(ws: Workspace, cli: Cli) -> None:
    import json

    from kbsync.app import board

    text = ws.read_text(BOARD)
    for i in range(60):
        words = "发布前检查锁文件是否释放" if i < 40 else "数据库迁移要先备份"
        text = coreboard.upsert(text, entry(title=f"条目 {i:02d}", summary=words, core_content=words,
                                            scenarios=("日常",), source_date="2025-02-01",
                                            confidence="high" if i % 2 else "low"))[0]
    (ws.root / BOARD).write_text(text, encoding="utf-8")
    shown = boardview.view(ws, boardview.Filters(q="锁文件"), NOW)
    assert shown.matched == 40 and shown.total == 60  # every match counted, not the search's first five
    assert shown.pages == 1 and len(shown.rows) == 40
    listed = [e.key for e in board.list_entries(ws, q="锁文件")]
    assert listed == [r.entry.key for r in shown.rows]  # one search: the page's order is the command's
    out = cli("board", "list", "--query", "锁文件", "--json", ws=ws.root)
    assert [e["key"] for e in json.loads(out.stdout)] == listed
    high = boardview.view(ws, boardview.Filters(q="锁文件", confidence="high"), NOW)
    assert high.matched == 20  # the filter applies to every match, before paging
