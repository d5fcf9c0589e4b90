"""The memory page in a real browser: facts of every memory file listed and searched, set (added or replaced
in place) and forgotten through the same app functions as `kbsync memory`, with the same validation; an
edit based on a value changed elsewhere since is refused."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.cli import main_call
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("memory"))
    for args in (("language", "中文"), ("editor", "vim"), ("--preferences", "tone", "terse"),
                 ("--entity", "Project Alpha", "owner", "王五")):
        assert main_call("memory", "set", *args, ws=root).returncode == 0
    b.commit_all(root, "memory")
    return root


def facts_text(site: WebServer) -> str:
    return (site.root / "memory/facts.md").read_text(encoding="utf-8")


def _row(page: Page, key: str) -> Locator:
    return page.locator("table.facts tbody tr", has=page.get_by_role("rowheader", name=key, exact=True))


def test_every_memory_file_is_listed_and_searched(page: Page, site: WebServer) -> None:
    page.get_by_role("link", name="Memory").click()
    rows = page.locator("table.facts tbody tr")
    assert rows.count() == 4 and "4 of 4 facts" in page.locator("#shown").inner_text()
    assert "memory/entities/project-alpha.md" in page.locator("table.facts").inner_text()
    page.get_by_label("Search").fill("王五")
    with page.expect_navigation():  # the filtered page, not the one before it
        page.get_by_role("button", name="Apply").click()
    assert rows.count() == 1 and "owner" in rows.first.inner_text()
    assert "q=%E7%8E%8B%E4%BA%94" in page.url  # the query stays in the URL
    page.goto(f"{site.url}/memory?file=preferences")
    assert rows.count() == 1 and "tone" in rows.first.inner_text()


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
