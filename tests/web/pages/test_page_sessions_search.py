"""The sessions page's search tells the truth: the sessions that match (and nothing of other kinds), their
true count, 25 a page with numbered pages, the month, day and tag filters applied before paging and kept
in every link; a query matching nothing says so; hostile query text stays text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest

from helpers import browser as b
from helpers.retrieval import session_text, sid_for, write
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

SESSIONS = 60
MATCHING = 55  # sessions 0 ... 54 hold 回滚
MONTHS = ("2025-05", "2025-06", "2025-07")


def _month(i: int) -> str:
    return MONTHS[i % 3]


def _tagged(i: int) -> bool:
    return i % 2 == 0


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("sessions-search"))
    for i in range(SESSIONS):
        ts = f"{_month(i)}-{1 + i % 28:02d}T{8 + i % 10:02d}:{i % 60:02d}:00+00:00"
        sid, prefix = sid_for(ts, f"s{i}")
        body = f"第 {i} 次发布。" + ("发布失败后回滚到上一个版本。" if i < MATCHING else "发布顺利。")
        write(root, f"{prefix}-s{i}.md", session_text(sid, ts, ("git",) if _tagged(i) else ("ops",), "open",
                                                      f"会话 {i:02d}", body))
    write(root, "memory/notes.md", "# 笔记\n\n回滚之前先备份。\n")  # another kind holding the word: not listed
    b.commit_all(root, f"{SESSIONS} sessions")
    return root


def _titles(page: Page) -> list[str]:
    return page.locator("ol.hits > li.hit h3").all_inner_texts()


def test_the_count_is_every_matching_session_paged_25_at_a_time(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions?q=%E5%9B%9E%E6%BB%9A")
    assert page.locator("#matched").inner_text() == f"{MATCHING} sessions match"
    seen = _titles(page)
    assert len(seen) == 25 and "Page 1 of 3" in page.locator("nav.pager").inner_text()
    assert all(href.startswith("/sessions/") for href in
               page.locator("ol.hits > li.hit h3 a").evaluate_all("as => as.map(a => a.getAttribute('href'))"))
    assert "kbsync search" in page.locator(".listing .hint").inner_text()  # where to search everything
    for at in (2, 3):
        page.get_by_role("link", name="Next page").click()
        page.wait_for_url(f"**page={at}**")
        assert parse_qs(urlsplit(page.url).query) == {"q": ["回滚"], "page": [str(at)]}
        assert page.locator("#matched").inner_text() == f"{MATCHING} sessions match"
        seen += _titles(page)
    assert len(_titles(page)) == MATCHING - 50 and "Page 3 of 3" in page.locator("nav.pager").inner_text()
    assert sorted(seen) == sorted(f"s{i}" for i in range(MATCHING))  # each matching session once
    page.get_by_role("link", name="Previous page").click()
    page.wait_for_url("**page=2**")
    assert len(_titles(page)) == 25


def test_filters_narrow_the_count_before_paging_and_stay_in_the_links(page: Page, site: WebServer) -> None:
    tagged = sum(1 for i in range(MATCHING) if _tagged(i))
    page.goto(f"{site.url}/sessions?q=%E5%9B%9E%E6%BB%9A")
    page.get_by_role("navigation", name="By month, By tag").get_by_role("link", name="git", exact=True).click()
    page.wait_for_url("**tag=git**")
    assert page.locator("#matched").inner_text() == f"{tagged} sessions match" and len(_titles(page)) == 25
    page.get_by_role("link", name="Next page").click()
    page.wait_for_url("**page=2**")
    assert parse_qs(urlsplit(page.url).query) == {"q": ["回滚"], "tag": ["git"], "page": ["2"]}
    assert len(_titles(page)) == tagged - 25
    page.get_by_role("navigation", name="By month, By tag").get_by_role("link", name="2025-06", exact=True).click()
    page.wait_for_url("**month=2025-06**")
    june = sum(1 for i in range(MATCHING) if _tagged(i) and _month(i) == "2025-06")
    assert page.locator("#matched").inner_text() == f"{june} sessions match"
    assert parse_qs(urlsplit(page.url).query) == {"q": ["回滚"], "tag": ["git"], "month": ["2025-06"]}
    assert len(_titles(page)) == june and page.locator("nav.pager").count() == 0
    page.get_by_label("Words, or filters such as tag:git").fill("回滚 发布")  # the box keeps the filters too
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**%E5%8F%91%E5%B8%83**")
    assert parse_qs(urlsplit(page.url).query) == {"q": ["回滚 发布"], "tag": ["git"], "month": ["2025-06"]}
    every_june = sum(1 for i in range(SESSIONS) if _tagged(i) and _month(i) == "2025-06")  # 发布 is in all of them
    assert page.locator("#matched").inner_text() == f"{every_june} sessions match"


def test_browsing_without_words_counts_every_session_and_numbers_its_pages(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions")
    assert page.locator("#listed").inner_text() == f"{SESSIONS} sessions"
    listed = page.locator("ol.cards > li.session h3").all_inner_texts()
    assert len(listed) == 50 and "Page 1 of 2" in page.locator("nav.pager").inner_text()
    page.get_by_role("navigation", name="Page 1 of 2").get_by_role("link", name="Page 2 of 2").click()
    page.wait_for_url("**page=2**")
    rest = page.locator("ol.cards > li.session h3").all_inner_texts()
    assert len(rest) == SESSIONS - 50 and sorted(listed + rest) == sorted(f"s{i}" for i in range(SESSIONS))
    assert page.locator("nav.pager [aria-current=page]").inner_text() == "2"
    page.get_by_role("navigation", name="By month, By tag").get_by_role("link", name="git", exact=True).click()
    page.wait_for_url("**tag=git**")  # the tag before the pages, and page 1 again
    tagged = sum(1 for i in range(SESSIONS) if _tagged(i))
    assert parse_qs(urlsplit(page.url).query) == {"tag": ["git"]}
    assert page.locator("#listed").inner_text() == f"{tagged} sessions" and page.locator("nav.pager").count() == 0
    page.get_by_role("navigation", name="By month, By tag").get_by_role("link", name="2025-06", exact=True).click()
    june = sum(1 for i in range(SESSIONS) if _tagged(i) and _month(i) == "2025-06")
    assert page.locator("#listed").inner_text() == f"{june} sessions"
    assert parse_qs(urlsplit(page.url).query) == {"month": ["2025-06"], "tag": ["git"]}
    page.goto(f"{site.url}/sessions?page=99")  # past the last: the last
    assert page.locator("nav.pager [aria-current=page]").inner_text() == "2"


def test_a_query_matching_nothing_says_so(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions?q=zzzz")
    assert page.locator("#matched").inner_text() == "0 sessions match"
    assert "No session matches." in page.locator(".listing").inner_text() and _titles(page) == []
    page.goto(f"{site.url}/sessions?q=zzzz&page=9")  # a page past the end is the last
    assert page.locator("#matched").inner_text() == "0 sessions match"


def test_hostile_query_text_stays_text(page: Page, site: WebServer) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    hostile = '回滚 "><script>alert(1)</script><img src=x onerror=alert(2)> tag:"a\' b"'
    page.goto(f"{site.url}/sessions")
    box = page.get_by_label("Words, or filters such as tag:git")
    box.fill(hostile)
    page.get_by_role("button", name="Search").click()
    page.wait_for_load_state()
    assert box.input_value() == hostile and not dialogs
    assert page.locator("main script, main img[src=x]").count() == 0
    assert "<script>alert(1)</script>" in page.locator("#list-h").inner_text()
    assert page.locator("#matched").inner_text() == "0 sessions match"  # the tag filter matches no session
    page.get_by_role("navigation", name="By month, By tag").get_by_role("link", name="2025-06", exact=True).click()
    assert parse_qs(urlsplit(page.url).query)["q"] == [hostile] and not dialogs


def test_the_zh_page_says_the_count_in_chinese(browser: b.Browser, site: WebServer) -> None:
    zh = b.open_logged_in(browser, site, lang="zh-CN")
    try:
        zh.goto(f"{site.url}/sessions?q=%E5%9B%9E%E6%BB%9A")
        assert zh.locator("#matched").inner_text() == f"{MATCHING} 个会话匹配"
        assert "第 1 页，共 3 页" in zh.locator("nav.pager").inner_text()
    finally:
        zh.context.close()
