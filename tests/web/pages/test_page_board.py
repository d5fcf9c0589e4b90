"""The board page in a real browser, on a real workspace served by the daemon: the three parts, filters,
search, sorting, the entry page, the add and edit forms, feedback and decay; each write checked on disk
and in git."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.board import entry
from helpers.daemon import wait_for
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

BOARD = "LEARNING_BOARD.md"
TYPES = ("踩坑", "方法", "观点", "工具")
TOPICS = ("部署", "git", "检索", "测试")
CONFIDENCES = ("high", "medium", "low")
ENTRIES = 32
GUIDE = "这里记录**长期有效**的经验。\n\n- 每条必须有场景\n- 每周回顾一次\n"
TRENDS = "| 月份 | 新增 |\n|---|---|\n| 2025-05 | 12 |\n\n部署类踩坑在减少。\n"


def fill_board(root: Path, n: int = ENTRIES) -> None:
    """`n` entries of every type, topic and confidence, the two text parts, committed."""
    from kbsync.app import board
    from kbsync.app.workspace import open_workspace

    ws = open_workspace(root, None)
    now = dt.datetime(2025, 7, 1, tzinfo=dt.timezone.utc)
    for i in range(n):
        e = entry(title=f"经验 {i:02d}", type=TYPES[i % 4], topic=TOPICS[i % 3], confidence=CONFIDENCES[i % 3],
                  summary=f"第 {i} 条的摘要", source_date=f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
                  scenarios=(f"场景 {i}", "发布流水线"), core_content=f"正文 {i}。\n\n```\ncode {i}\n```\n")
        board.add_entry(ws, {k: v for k, v in e.as_dict().items() if k != "status"} | {
            "scenarios": list(e.scenarios)}, now)
    text = (root / BOARD).read_text(encoding="utf-8")
    text = text.replace("## 长期说明\n", f"## 长期说明\n\n{GUIDE}", 1).replace("## 长期趋势\n", f"## 长期趋势\n\n{TRENDS}", 1)
    (root / BOARD).write_text(text, encoding="utf-8")
    b.commit_all(root, "the board under test")


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("board"))
    fill_board(root)
    return root


def cards(page: Page) -> list[str]:
    return page.locator(".cards h3").all_inner_texts()


def board_text(site: WebServer) -> str:
    return (site.root / BOARD).read_text(encoding="utf-8")


def test_the_board_shows_its_three_parts_and_every_entry(page: Page) -> None:
    assert page.get_by_role("heading", name="长期说明").count() == 1
    assert page.locator("section[aria-labelledby=guide] strong").inner_text() == "长期有效"
    assert page.locator("section[aria-labelledby=trends] table td").first.inner_text() == "2025-05"
    assert len(cards(page)) == ENTRIES
    first = page.locator(".cards .card").first
    for word in ("Type:", "Topic:", "Confidence:", "Status: active", "Scenarios:", "Helpful: 0", "Harmful: 0",
                 "Last applied: never"):
        assert word in first.inner_text()
    assert cards(page)[0] == "经验 23"  # newest source date first (2025-12-24)
    b.shot(page, "board")
    b.shot(page, "board-top", height=1500)


def test_filters_narrow_the_entries(page: Page) -> None:
    page.get_by_label("Type").select_option("工具")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert set(cards(page)) == {f"经验 {i:02d}" for i in range(ENTRIES) if i % 4 == 3}
    assert "type=%E5%B7%A5%E5%85%B7" in page.url and page.get_by_label("Type").input_value() == "工具"
    page.get_by_label("Topic").select_option("git")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert set(cards(page)) == {"经验 07", "经验 19", "经验 31"}
    page.get_by_label("Status").select_option("active")
    page.get_by_label("Confidence").select_option("high")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert cards(page) == [] and page.get_by_text("No entry matches.").count() == 1
    page.get_by_role("link", name="Clear").click()
    assert len(cards(page)) >= ENTRIES and page.get_by_label("Type").input_value() == ""


def test_the_search_box_runs_the_federated_search(page: Page) -> None:
    page.get_by_label("Search").fill("第 7 条")
    page.get_by_label("Search").press("Enter")  # by keyboard: the form submits
    assert cards(page)[0] == "经验 07"
    assert page.get_by_label("Search").input_value() == "第 7 条"
    page.get_by_label("Search").fill("since:yesterday")
    page.get_by_label("Search").press("Enter")
    assert "is not a date" in page.locator("#e-q").inner_text() and cards(page) == []  # said beside the box


def test_sorting_by_helpful_and_by_least_recently_applied(page: Page, site: WebServer) -> None:
    site.call("POST", "/board/entries/" + "经验 05@2025-06-06" + "/feedback", body={"vote": "helpful"})
    site.call("POST", "/board/entries/" + "经验 05@2025-06-06" + "/applied", body={})
    page.get_by_label("Sort").select_option("helpful")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert cards(page)[0] == "经验 05"
    page.get_by_label("Sort").select_option("idle")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert cards(page)[-1] == "经验 05"  # the one applied is the most recently applied


def test_clicking_helpful_counts_on_this_machine_and_leaves_the_markdown(page: Page, site: WebServer) -> None:
    before = board_text(site)
    card = page.locator(".card", has=page.get_by_role("link", name="经验 20", exact=True))
    card.get_by_role("button", name="Helpful").click()
    card = page.locator(".card", has=page.get_by_role("link", name="经验 20", exact=True))
    assert card.locator(".helpful-count").inner_text() == "Helpful: 1"
    assert card.get_by_role("status").inner_text() == "Feedback recorded."  # shown on the card voted on
    card.get_by_role("button", name="Harmful").click()
    assert page.locator(".card", has=page.get_by_role("link", name="经验 20", exact=True)).locator(
        ".harmful-count").inner_text() == "Harmful: 1"
    assert board_text(site) == before and b.git_clean(site.root, BOARD)


def test_the_entry_page_shows_every_field_and_renders_the_core_content(page: Page) -> None:
    page.get_by_role("link", name="经验 03", exact=True).click()
    fields = page.locator("dl.fields").inner_text()
    for text in ("经验 03@2025-04-04", "工具", "部署", "第 3 条的摘要", "high", "active", "sessions/2025-06-11",
                 "2025-04-04", "场景 3", "发布流水线"):
        assert text in fields
    assert page.locator(".rendered pre code").inner_text().strip() == "code 3"
    b.shot(page, "entry")


def test_adding_an_entry_refuses_a_missing_field_then_writes_it(page: Page, site: WebServer) -> None:
    before = board_text(site)
    page.get_by_role("link", name="Add entry").click()
    page.get_by_label("Title").fill("新条目")
    page.get_by_label("Type").select_option("方法")
    page.get_by_label("Topic").fill("部署")
    page.get_by_label("Scenarios").fill("回滚\n夜间发布")
    page.get_by_label("Source", exact=True).fill("sessions/2025-07-01/0900-abcdef0-x.md")
    page.get_by_label("Source date").fill("2025-07-01")
    page.get_by_label("Core content").fill("先回滚，再排查。")
    page.get_by_role("button", name="Save").click()
    problem = page.locator("#e-summary")
    assert "summary" in problem.inner_text() and page.get_by_label("Summary").get_attribute("aria-invalid") == "true"
    assert page.get_by_label("Title").input_value() == "新条目"  # what was typed is kept
    assert page.get_by_label("Scenarios").input_value() == "回滚\n夜间发布"
    assert board_text(site) == before
    b.shot(page, "entry-form-errors")
    page.get_by_label("Summary").fill("发布失败先回滚")
    page.get_by_role("button", name="Save").click()
    assert page.get_by_role("heading", level=1).inner_text() == "新条目"
    assert page.get_by_role("status").inner_text() == "Added."
    text = board_text(site)
    assert "### 新条目\n" in text and "- 摘要: 发布失败先回滚\n" in text and "  - 夜间发布\n" in text
    wait_for(lambda: b.git_clean(site.root, BOARD), timeout=30)  # the daemon committed it
    assert "### 新条目" in b.git_show(site.root, f"HEAD:{BOARD}")


def test_editing_sends_the_full_entry(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/board/edit?key=%E7%BB%8F%E9%AA%8C%2010%402025-11-11")
    assert page.get_by_label("Summary").input_value() == "第 10 条的摘要"
    page.get_by_label("Summary").fill("改过的摘要")
    page.get_by_label("Status").select_option("retired")
    page.get_by_role("button", name="Save").click()
    assert page.get_by_role("status").inner_text() == "Saved."
    block = board_text(site).split("### 经验 10\n", 1)[1].split("### ", 1)[0]
    assert "- 摘要: 改过的摘要\n" in block and "- 状态: retired\n" in block and "  - 场景 10\n" in block


def test_a_decay_candidate_is_marked_decaying(page: Page, site: WebServer) -> None:
    key = "经验 30@2025-07-03"
    site.call("POST", f"/board/entries/{key}/feedback", body={"vote": "harmful"})
    page.reload()
    decay = page.locator("section[aria-labelledby=decay] tr", has_text=key)
    assert "harmful" in decay.inner_text()
    decay.get_by_role("button", name="Mark decay").click()
    assert page.get_by_role("status").first.inner_text() == "Marked as decaying."
    block = board_text(site).split("### 经验 30\n", 1)[1].split("### ", 1)[0]
    assert "- 状态: decaying\n" in block


def test_chinese_labels_by_accept_language_and_a_phone_screen(browser: b.Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site, lang="zh-CN,zh;q=0.9", phone=True)
    try:
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        assert page.get_by_role("link", name="看板").get_attribute("aria-current") == "page"
        assert page.get_by_role("button", name="有用").count() >= ENTRIES
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= b.PHONE["width"], "the page scrolls sideways on a phone"
        b.shot(page, "board-phone-zh", full_page=False)
    finally:
        page.context.close()


def test_every_action_is_reachable_by_keyboard(page: Page, site: WebServer) -> None:
    b.assert_keyboard_ready(page)
    page.get_by_role("link", name="经验 03", exact=True).click()
    b.assert_keyboard_ready(page)
    page.goto(f"{site.url}/board/new")
    b.assert_keyboard_ready(page)

def test_a_vote_returns_to_its_card_with_the_confirmation_there(page: Page, site: WebServer) -> None:
    card = page.locator(".cards .card", has_text="经验 21")
    helpful = card.get_by_role("button", name="Helpful · 经验 21")  # the button names its entry
    assert helpful.count() == 1
    helpful.click()
    anchor = card.get_attribute("id")
    assert anchor and page.url.endswith(f"#{anchor}")
    card = page.locator(f"#{anchor}")
    assert card.get_by_role("status").inner_text() == "Feedback recorded."
    assert "Helpful: 1" in card.inner_text()
    page.wait_for_load_state()  # the fragment is the focus start once the page has loaded
    page.keyboard.press("Tab")  # the next Tab starts from the card, not from the top of the page
    assert page.evaluate(f"document.getElementById('{anchor}').contains(document.activeElement)")
