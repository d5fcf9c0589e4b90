"""The stats and review pages in a real browser: every picture is an SVG with its numbers in a table; the
weekly review lists what changed and reads zero drift between the Markdown and the index."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.board import payload
from helpers.web import WebServer
from kbsync.app import board, sessions
from kbsync.app.retrieval import rebuild_search
from kbsync.app.workspace import open_workspace

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

NOW = dt.datetime.now(dt.timezone.utc)


SESSIONS_CHART = "Sessions per month by tag (each session once, under its first tag among the most used)"

def _fill(root: Path) -> None:
    ws = open_workspace(str(root), None)
    for n in range(12):
        month = 4 + n % 3
        tags = [("部署", "git", "合同")[n % 3]] + (["复盘"] if n % 4 == 0 else [])
        sessions.save_session(ws, {"session_id": f"s{n}", "ts": f"2025-{month:02d}-{1 + n:02d}T09:00:00+00:00",
                                   "tags": tags, "sections": {"结论": f"第 {n} 次"}})
    for n, (kind, confidence, topic) in enumerate((("踩坑", "high", "部署"), ("方法", "medium", "git"),
                                                   ("方法", "high", "git"), ("工具", "low", "搜索"))):
        board.add_entry(ws, payload(title=f"条目{n}", type=kind, confidence=confidence, topic=topic,
                                    source_date="2025-01-01"), NOW)
    for key, helpful in (("条目0@2025-01-01", True), ("条目0@2025-01-01", True), ("条目1@2025-01-01", False)):
        board.give_feedback(ws, key, helpful=helpful)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "sessions and board"], check=True)
    rebuild_search(ws)


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("stats"))
    _fill(root)
    return root


def _numbers(page: Page, name: str) -> list[list[str]]:
    table = page.get_by_role("table", name=name)
    return [row.locator("th, td").all_inner_texts() for row in table.locator("tbody tr").all()]


def test_every_picture_is_svg_with_its_numbers_in_a_table(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/stats")
    pictures = page.locator("svg[role=img]")
    assert pictures.count() == 4
    for n in range(4):
        title = pictures.nth(n).locator("title").first.text_content() or ""
        assert page.get_by_role("table", name=title).count() == 1
        assert page.get_by_role("img", name=title).count() == 1
    per_month = _numbers(page, SESSIONS_CHART)
    assert [row[0] for row in per_month] == ["2025-04", "2025-05", "2025-06"]
    header = page.get_by_role("table", name=SESSIONS_CHART).locator("thead th").all_inner_texts()
    got = dict(zip(header[1:], per_month[0][1:]))
    assert got["部署"] == "4" and got["total"] == "4"  # April's four sessions, one of them tagged 复盘 too: counted once
    assert got.get("复盘", "0") == "0"
    entries = _numbers(page, "Board entries by type and confidence")
    assert ["方法", "1", "1", "0", "2"] in entries
    votes = _numbers(page, "Helpful and harmful votes per topic (this machine)")
    assert votes[:2] == [["部署", "2", "0", "2"], ["git", "0", "1", "1"]]
    assert page.locator("svg rect title", has_text="2025-04 · 部署: 4").count() == 1
    b.shot(page, "stats")


def test_the_pictures_speak_chinese_to_a_chinese_browser(browser: Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site, lang="zh-CN,zh;q=0.9")
    try:
        page.goto(f"{site.url}/stats")
        header = page.get_by_role("table", name="每个主题的有用与有害反馈（本机）").locator("thead th").all_inner_texts()
        assert header[1:] == ["有用", "有害", "合计"]
        assert page.get_by_role("table", name="每月会话数（按标签；每个会话只计一次，计入它在常用标签中的第一个）").count() == 1
    finally:
        page.context.close()


def test_every_action_is_reachable_by_keyboard(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/stats")
    b.assert_keyboard_ready(page)
    page.goto(f"{site.url}/review")
    b.assert_keyboard_ready(page)


def test_the_review_reads_zero_drift(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/review")
    assert page.locator("#drift-count").inner_text() == "0"
    added = page.locator("section", has=page.get_by_role("heading", name="Added (4)"))
    assert set(added.locator("li").all_inner_texts()) == {f"条目{n}@2025-01-01" for n in range(4)}
    decay = page.locator("section", has=page.get_by_role("heading", name="Decay candidates (1)"))
    assert "harmful 1 > helpful 0" in decay.inner_text()
    b.shot(page, "review")
    page.get_by_label("Since").fill("not a date")
    page.get_by_role("button", name="Show").click()
    assert "since='not a date'" in page.get_by_role("alert").inner_text()


def test_the_pictures_are_readable_on_a_phone(browser: Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site, lang="zh-CN,zh;q=0.9", phone=True)
    try:
        page.goto(f"{site.url}/stats")
        assert page.evaluate("document.documentElement.scrollWidth") <= b.PHONE["width"]  # the page never scrolls
        sizes = page.evaluate("[...document.querySelectorAll('svg.chart text')].map(t => t.getBoundingClientRect()"
                              ".height).filter(h => h > 0)")
        assert sizes and min(sizes) >= 11, sizes  # labels of about 11 px, not 6
        legends = page.evaluate("""[...document.querySelectorAll('svg.chart')].map(svg => {
            const boxes = [...svg.querySelectorAll('rect + text')].map(t => t.getBoundingClientRect());
            return boxes.some((a, i) => boxes.some((b, j) => i < j && a.top === b.top
                                                    && a.left < b.right && b.left < a.right));
        })""")
        assert not any(legends), "two legend labels overlap"
        b.shot(page, "stats-phone-zh", full_page=False)
    finally:
        page.context.close()
