"""The conflicts page in a real browser: both versions side by side with the changed words marked, times
and machines; each of "Keep mine", "Keep theirs" and "Keep both" writes the file, removes the copy and
makes a commit, and the page then shows the file as it is on disk."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.cli import kbsync
from helpers.daemon import wait_for
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
    checked = kbsync("validate", ws=site.root)  # one key stays one fact: nothing for validate to warn about
    assert checked.returncode == 0 and "memory/facts.md" not in checked.stdout + checked.stderr
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


def test_an_entry_edited_by_hand_a_bad_edit_kept_and_said_then_saved(page: Page, site: WebServer) -> None:
    from helpers.board import entry
    from kbsync.core import board

    base = board.upsert(board.upsert(board.NEW_BOARD, entry(title="回滚步骤", summary="先停服务"))[0],
                        entry(title="日志轮转", summary="按天"))[0]
    (site.root / "LEARNING_BOARD.md").write_text(base, encoding="utf-8")
    copy = board.upsert(board.upsert(board.NEW_BOARD, entry(title="回滚步骤", summary="先切流量"))[0],
                        entry(title="日志轮转", summary="按大小"))[0]
    (site.root / copy_of("LEARNING_BOARD.md")).write_text(copy, encoding="utf-8")
    # both versions committed as they arrived (the server's timed commit), so that the settling commit removes
    # a committed copy: under load the settle could otherwise come first
    wait_for(lambda: all(b.git_clean(site.root, p) for p in ("LEARNING_BOARD.md", copy_of("LEARNING_BOARD.md"))))
    page.goto(f"{site.url}/conflicts")
    art = page.locator("article", has_text="LEARNING_BOARD.md")
    does = art.locator("ul.does").inner_text()
    assert "or my edit: the text in its box" in does and "the copy is removed" in does
    box = art.get_by_label("Edit 回滚步骤@2025-06-11 by hand", exact=True)
    assert not box.is_visible()  # folded until asked for
    art.locator("summary", has_text="Edit 回滚步骤@2025-06-11 by hand").click()
    assert box.input_value().startswith("### 回滚步骤\n") and "- 摘要: 先切流量\n" in box.input_value()
    box.fill(box.input_value().replace("### 回滚步骤", "### 回滚步骤（新）").replace("先切流量", "先切流量再停服务"))
    art.locator("fieldset", has_text="回滚步骤").get_by_label("my edit (below)").check()
    with page.expect_navigation():
        art.get_by_role("button", name="Save my picks").click()
    art = page.locator("article", has_text="LEARNING_BOARD.md")  # refused: shown again as sent
    assert "Nothing was written" in art.get_by_role("alert").inner_text() and "key" in art.get_by_role("alert").inner_text()
    box = art.get_by_label("Edit 回滚步骤@2025-06-11 by hand", exact=True)
    assert box.is_visible() and "### 回滚步骤（新）" in box.input_value()  # the person's text kept
    assert art.locator("fieldset", has_text="回滚步骤").get_by_label("my edit (below)").is_checked()
    assert (site.root / "LEARNING_BOARD.md").read_text(encoding="utf-8") == base
    assert (site.root / copy_of("LEARNING_BOARD.md")).exists()
    box.fill(box.input_value().replace("### 回滚步骤（新）", "### 回滚步骤"))
    art.locator("fieldset", has_text="日志轮转").get_by_label("theirs").check()
    with page.expect_navigation():
        art.get_by_role("button", name="Save my picks").click()
    assert "/conflicts/settled?" in page.url
    text = (site.root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "- 摘要: 先切流量再停服务\n" in text and "- 摘要: 按天\n" in text and "按大小" not in text
    assert text.count("### 回滚步骤\n") == 1
    _committed(site.root, "LEARNING_BOARD.md", "picked")


def test_a_file_edited_by_hand_is_written_exactly_as_typed(page: Page, site: WebServer) -> None:
    original = "artifacts/draft.md"
    (site.root / original).write_text("# 草稿\n\n这台机器的版本。\n", encoding="utf-8")
    (site.root / copy_of(original)).write_text("# 草稿\n\n另一台机器的版本。\n", encoding="utf-8")
    b.commit_all(site.root, "a draft on two machines")
    page.goto(f"{site.url}/conflicts")
    art = page.locator("article", has_text=original)
    assert "Save this text: the file becomes exactly the text in the box" in art.locator("ul.does").inner_text()
    art.locator("summary", has_text="Edit the result by hand").click()
    box = art.get_by_label("The file's text after saving")
    assert box.input_value() == "# 草稿\n\n另一台机器的版本。\n"  # starts as Keep mine would write it
    typed = "# 草稿\n\n两台机器的版本，合在一起：<script>alert(1)</script>\n"
    box.fill(typed)
    with page.expect_navigation():
        art.get_by_role("button", name="Save this text").click()
    assert "/conflicts/settled?" in page.url
    assert (site.root / original).read_text(encoding="utf-8") == typed
    assert "<script>alert(1)</script>" in page.locator("pre").inner_text()
    _committed(site.root, original, "edited")
