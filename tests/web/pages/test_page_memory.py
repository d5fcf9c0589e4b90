"""The memory page in a real browser: facts of every memory file listed and searched, set (added or replaced
in place) and forgotten through the same app functions as `kbsync memory`, with the same validation; an
edit based on a value changed elsewhere since is refused. The list is paged (50 facts a page, STEPS more facts
in a runbook's file make it two): the true total, numbered pages, the search and the file before paging, and
every action back on the page and row where the person was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pytest

from helpers import browser as b
from helpers.cli import main_call
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


STEPS, PAGE = 60, 50  # facts in the runbook's file; facts a page shows


def _rolled_back(n: int) -> bool:
    return n % 2 == 1  # 30 steps hold 回滚, on both pages of the whole list


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("memory"))
    for args in (("language", "中文"), ("editor", "vim"), ("--preferences", "tone", "terse"),
                 ("--entity", "Project Alpha", "owner", "王五")):
        assert main_call("memory", "set", *args, ws=root).returncode == 0
    steps = "".join(f"- step{n:02d}: 第 {n} 步：" + ("失败就回滚\n" if _rolled_back(n) else "检查锁文件\n")
                    for n in range(STEPS))
    (root / "memory/entities/runbook.md").write_text(f"# Runbook\n\n{steps}", encoding="utf-8")
    b.commit_all(root, "memory")
    return root


def _listed(site: WebServer) -> list[str]:
    """The keys `kbsync memory list` lists, in its order."""
    done = main_call("memory", "list", "--json", ws=site.root)
    assert done.returncode == 0, done.stderr
    return [str(f["key"]) for f in json.loads(done.stdout)]


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _focused(page: Page) -> str | None:
    """The name of what the next Tab reaches (once the page has loaded: its fragment is where focus starts)."""
    page.wait_for_load_state()
    page.keyboard.press("Tab")
    name: str | None = page.evaluate("document.activeElement.getAttribute('aria-label')")
    return name


def facts_text(site: WebServer) -> str:
    return (site.root / "memory/facts.md").read_text(encoding="utf-8")


def _row(page: Page, key: str) -> Locator:
    return page.locator("table.facts tbody tr", has=page.get_by_role("rowheader", name=key, exact=True))


def test_every_memory_file_is_listed_and_searched(page: Page, site: WebServer) -> None:
    page.get_by_role("link", name="Memory").click()
    page.wait_for_url("**/memory")
    rows = page.locator("table.facts tbody tr")
    total = 4 + STEPS
    assert rows.count() == PAGE and page.locator("#shown").inner_text() == f"{total} of {total} facts"
    assert "memory/entities/project-alpha.md" in page.locator("table.facts").inner_text()
    page.get_by_label("Search").fill("王五")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert rows.count() == 1 and "owner" in rows.first.inner_text()
    assert "q=%E7%8E%8B%E4%BA%94" in page.url  # the query stays in the URL
    page.goto(f"{site.url}/memory?file=preferences")
    assert rows.count() == 1 and "tone" in rows.first.inner_text()


def test_the_list_is_paged_with_its_true_total_and_the_search_before_paging(page: Page, site: WebServer) -> None:
    listed = _listed(site)
    total, pages = len(listed), -(-len(listed) // PAGE)
    assert pages == 2
    page.goto(f"{site.url}/memory")
    assert page.locator("#shown").inner_text() == f"{total} of {total} facts"
    pager = page.get_by_role("navigation", name=f"Page 1 of {pages}")
    assert b.fact_keys(page) == listed[:PAGE]
    pager.get_by_role("link", name=f"Page 2 of {pages}", exact=True).click()
    page.wait_for_url("**page=2**")
    assert _query(page) == {"page": ["2"]} and b.fact_keys(page) == listed[PAGE:]  # the rest, each fact on one page
    assert page.locator("#shown").inner_text() == f"{total} of {total} facts"
    page.get_by_role("navigation", name=f"Page 2 of {pages}").get_by_role("link", name="Previous page").click()
    page.wait_for_url("**/memory")
    assert b.fact_keys(page) == listed[:PAGE]
    page.get_by_label("Search").fill("回滚")
    with page.expect_navigation():  # a search starts again at page 1, and keeps every match on it
        page.get_by_role("button", name="Apply").click()
    rolled = [f"step{n:02d}" for n in range(STEPS) if _rolled_back(n)]
    assert page.locator("#shown").inner_text() == f"{len(rolled)} of {total} facts" and _query(page) == {"q": ["回滚"]}
    assert b.fact_keys(page) == rolled and page.locator("nav.pager").count() == 0  # from both pages of the whole list
    page.goto(f"{site.url}/memory?q=%E6%AD%A5&file=entity&page=2")  # 步: every step; the file filter kept too
    assert page.locator("#shown").inner_text() == f"{STEPS} of {total} facts"
    assert b.fact_keys(page) == [f"step{n:02d}" for n in range(PAGE, STEPS)]
    page.get_by_role("navigation", name="Page 2 of 2").get_by_role("link", name="Page 1 of 2").click()
    page.wait_for_url("**file=entity**")
    assert _query(page) == {"q": ["步"], "file": ["entity"]} and b.fact_keys(page)[0] == "step00"
    page.goto(f"{site.url}/memory?page=9")  # past the last page: the last
    assert b.fact_keys(page) == listed[PAGE:] and page.locator("nav.pager").inner_text().count("Page 2 of 2") == 1


def test_an_action_on_a_later_page_returns_to_that_page_and_row(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/memory?q=%E6%AD%A5&page=2")  # 步: the steps, their second page
    keys = b.fact_keys(page)
    page.get_by_role("button", name=f"Forget {keys[2]}", exact=True).click()
    assert _query(page) == {"q": ["步"], "page": ["2"], "done": ["removed"], "forgot": [keys[2]],
                            "place": [str(PAGE + 2)]}
    assert page.locator("#forgotten").inner_text() == f"{keys[2]} forgotten."  # where its row was
    assert b.fact_keys(page) == keys[:2] + keys[3:]
    assert _focused(page) == f"Edit {keys[3]}"  # the fact that took its place
    page.get_by_role("link", name=f"Edit {keys[5]}", exact=True).click()
    assert _query(page)["page"] == ["2"]  # the form keeps the page too
    page.get_by_label("Value", exact=True).fill("第 55 步：先通知值班")
    page.get_by_role("button", name="Save").click()
    assert _query(page) == {"q": ["步"], "page": ["2"], "done": ["replaced"], "row": [urlsplit(page.url).fragment]}
    assert page.locator("tr", has=page.get_by_role("status")).get_by_role("rowheader").inner_text() == keys[5]
    assert _focused(page) == f"Edit {keys[5]}"
    page.goto(f"{site.url}/memory?q=%E6%AD%A5")
    first = b.fact_keys(page)
    page.get_by_role("button", name=f"Forget {first[-1]}", exact=True).click()  # the last row of page 1
    assert "page" not in _query(page) and b.fact_keys(page) == first[:-1] + [keys[0]]  # the first of page 2 moved up
    assert _focused(page) == f"Edit {keys[0]}"
    page.goto(f"{site.url}/memory?page=2")
    page.get_by_label("Key").fill("pager")
    page.get_by_label("Value", exact=True).fill("50 a page")
    page.get_by_role("button", name="Save").click()  # added to memory/facts.md: on the first page
    assert "page" not in _query(page) and _row(page, "pager").get_by_role("status").inner_text() == "Added."
    page.get_by_role("button", name="Forget pager", exact=True).click()
    assert page.locator("#forgotten").inner_text() == "pager forgotten." and "page" not in _query(page)


def test_set_edit_and_forget_a_fact(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/memory")
    page.get_by_label("Key").fill("shell")
    page.get_by_label("Value", exact=True).fill("zsh")
    page.get_by_role("button", name="Save").click()
    assert _row(page, "shell").get_by_role("status").inner_text() == "Added."  # said on the fact's row
    assert "- shell: zsh\n" in facts_text(site)
    page.get_by_role("link", name="Edit editor").click()
    assert page.get_by_label("Value", exact=True).input_value() == "vim"
    page.get_by_label("Value", exact=True).fill("helix")
    page.get_by_role("button", name="Save").click()
    assert _row(page, "editor").get_by_role("status").inner_text() == "Saved."
    assert "- editor: helix\n" in facts_text(site) and "vim" not in facts_text(site)
    page.get_by_role("button", name="Forget shell").click()
    assert page.locator("#forgotten").get_by_role("status").inner_text() == "shell forgotten."  # where it was
    assert "shell" not in facts_text(site)
    assert main_call("validate", ws=site.root).returncode == 0


def test_a_bad_fact_is_refused_and_a_stale_edit_too(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/memory")
    page.get_by_label("Key").fill("")
    page.get_by_role("button", name="Save").click()
    assert "Not saved" in page.get_by_role("alert").first.inner_text()
    page.goto(f"{site.url}/memory")
    page.get_by_role("link", name="Edit language").click()
    assert main_call("memory", "set", "language", "English", ws=site.root).returncode == 0
    page.get_by_label("Value", exact=True).fill("日本語")
    page.get_by_role("button", name="Save").click()
    assert "changed" in page.get_by_role("alert").first.inner_text()
    assert page.locator("mark", has_text="English").count() == 1
    assert "- language: English\n" in facts_text(site)
