"""The conflicts page in a real browser: both versions side by side with the changed words marked, times
and machines; each of "Keep mine", "Keep theirs" and "Keep both" writes the file, removes the copy and
makes a commit, and the page then shows the file as it is on disk."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

STAMP, MACHINE = "20250611T143207Z", "a1b2c3"
FILES = {  # original: (its text, the copy's text)
    "memory/facts.md": ("# 长期事实\n\n- 项目名: Alpha\n", "# 长期事实\n\n- 项目名: Beta\n- 语言: 中文\n"),
    "artifacts/plan.md": ("# 计划\n\n周一发布，先跑迁移。\n", "# 计划\n\n周三发布，先跑迁移。\n"),
    "artifacts/notes.md": ("# 笔记\n\n保留这一版。\n", "# 笔记\n\n另一台机器的版本。\n"),
}


def copy_of(original: str) -> str:
    return original[:-3] + f".conflict-{STAMP}-{MACHINE}.md"


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("conflicts"))
    for original, (theirs, mine) in FILES.items():
        (root / original).write_text(theirs, encoding="utf-8")
        (root / copy_of(original)).write_text(mine, encoding="utf-8")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "two machines' versions"], check=True)
    return root


def _settle(page: Page, site: WebServer, original: str, choice: str, *, keyboard: bool = False) -> str:
    page.goto(f"{site.url}/conflicts")
    button = page.locator("article", has_text=original).get_by_role("button", name=choice)
    with page.expect_navigation():
        if keyboard:
            button.focus()
            page.keyboard.press("Enter")
        else:
            button.click()
    assert "/conflicts/settled?" in page.url, page.url
    return page.locator("pre").inner_text()


def _committed(root: Path, original: str, kept: str) -> None:
    copy = copy_of(original)
    assert not (root / copy).exists()
    assert b.git_log(root, copy)[0] == f"conflict: {original} settled, kept {kept} ({copy})"  # the commit removing it
    if kept != "theirs":  # theirs leaves the file as committed: only the copy's removal is new
        assert b.git_log(root, original)[0] == b.git_log(root, copy)[0]
    assert b.git_clean(root, original)
    tracked = subprocess.run(["git", "-C", str(root), "ls-files", "--", copy], check=True, capture_output=True,
                             text=True).stdout
    assert tracked == ""


def test_both_versions_side_by_side_with_times_machines_and_marked_words(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/conflicts")
    plan = page.locator("article", has_text="artifacts/plan.md")
    assert MACHINE in plan.inner_text() and "2025-06-11T14:32:07Z" in plan.inner_text()
    changed = plan.locator("tr.changed")
    assert changed.locator("td.old mark").all_inner_texts() == ["一"]
    assert changed.locator("td.new mark").all_inner_texts() == ["三"]
    facts = page.locator("article", has_text="memory/facts.md")
    assert facts.get_by_role("button").all_inner_texts() == ["Keep mine", "Keep theirs", "Keep both",
                                                             "Save my picks"]
    assert plan.get_by_role("button").all_inner_texts() == ["Keep mine", "Keep theirs"]  # both: entry files only
    clash = facts.locator("section.clash", has_text="语言")  # entry by entry, not line by line
    assert clash.locator("td.old").inner_text() == "(none)" and clash.locator("td.new").inner_text() == "中文"
    assert "Keep theirs: the file stays exactly as it is" in facts.locator("ul.does").inner_text()
    b.shot(page, "conflict")


def test_every_action_is_reachable_by_keyboard(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/conflicts")
    b.assert_keyboard_ready(page)


def test_keep_mine(page: Page, site: WebServer) -> None:
    shown = _settle(page, site, "artifacts/plan.md", "Keep mine")
    on_disk = (site.root / "artifacts/plan.md").read_text(encoding="utf-8")
    assert on_disk == FILES["artifacts/plan.md"][1] and shown.strip() == on_disk.strip()
    _committed(site.root, "artifacts/plan.md", "mine")
    b.shot(page, "conflict-settled")


def test_keep_theirs_by_keyboard(page: Page, site: WebServer) -> None:
    shown = _settle(page, site, "artifacts/notes.md", "Keep theirs", keyboard=True)
    on_disk = (site.root / "artifacts/notes.md").read_text(encoding="utf-8")
    assert on_disk == FILES["artifacts/notes.md"][0] and shown.strip() == on_disk.strip()
    _committed(site.root, "artifacts/notes.md", "theirs")


def test_keep_both_entries(page: Page, site: WebServer) -> None:
    shown = _settle(page, site, "memory/facts.md", "Keep both")
    on_disk = (site.root / "memory/facts.md").read_text(encoding="utf-8")
    assert "- 项目名: Alpha\n  Beta\n" in on_disk and "- 语言: 中文" in on_disk
    assert shown.strip() == on_disk.strip()
    _committed(site.root, "memory/facts.md", "both")
    page.goto(f"{site.url}/conflicts")
    assert page.locator("article").count() == 0
    assert "No conflicts" in page.locator("main").inner_text()


def test_a_board_conflict_entry_by_entry_and_a_side_taken_for_each(page: Page, site: WebServer) -> None:
    from helpers.board import entry
    from kbsync.core import board

    base = board.upsert(board.upsert(board.NEW_BOARD, entry(title="发布流程", summary="先回滚"))[0],
                        entry(title="缓存策略", summary="按天过期"))[0]
    (site.root / "LEARNING_BOARD.md").write_text(base, encoding="utf-8")
    copy = board.upsert(board.upsert(board.NEW_BOARD, entry(title="发布流程", summary="先回滚再排查"))[0],
                        entry(title="缓存策略", summary="按小时过期"))[0]
    (site.root / copy_of("LEARNING_BOARD.md")).write_text(copy, encoding="utf-8")
    page.goto(f"{site.url}/conflicts")
    art = page.locator("article", has_text="LEARNING_BOARD.md")
    release = art.locator("section.clash", has_text="发布流程")
    changed = release.locator("tr.changed")
    assert changed.count() == 1 and "summary" in changed.locator("th").inner_text()
    assert (changed.locator("td.old").inner_text(), changed.locator("td.new").inner_text()) == ("先回滚", "先回滚再排查")
    assert art.locator("details.lines-diff").get_attribute("open") is None  # the line diff only on request
    art.locator("fieldset", has_text="缓存策略").get_by_label("theirs").check()
    with page.expect_navigation():
        art.get_by_role("button", name="Save my picks").click()
    text = (site.root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "- 摘要: 先回滚再排查\n" in text and "- 摘要: 按天过期\n" in text and "按小时过期" not in text
    assert not (site.root / copy_of("LEARNING_BOARD.md")).exists()
