"""What only the learned classifier flags is shown to a person where the rules' flags are: the status page lists
the record (as `kbsync status` does) with a link to its page, the session page marks the text a model is not
given, search results carry the family as a badge. Real chromium, real daemon, the semantic index built with
the real model before the site starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.board import payload
from helpers.cli import main_call
from helpers.retrieval import ONLY_BY_MEANING, build_semantic, plant_classified
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

SAVED: dict[str, str] = {}


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("classified"))
    SAVED["id"], SAVED["path"] = plant_classified(root)
    entry = payload(title="Invoice routing", summary="How invoices reach the team", core_content=ONLY_BY_MEANING)
    assert main_call("board", "add", ws=root, stdin=json.dumps(entry, ensure_ascii=False)).returncode == 0
    build_semantic(root)
    b.commit_all(root, "a session only the classifier flags")
    return root


def test_the_status_page_lists_what_the_classifier_flags(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/status")
    table = page.locator("table[aria-labelledby=classified]")
    row = table.locator("tbody tr", has_text=SAVED["path"])
    assert "classifier" in row.inner_text() and "head" in row.inner_text()
    row.get_by_role("link").click()
    assert page.url.endswith(f"/sessions/{SAVED['id']}")
    notes = page.locator(".flag-notes")
    assert "classifier" in notes.inner_text()
    assert ONLY_BY_MEANING in notes.locator("mark.offending").all_inner_texts()
    b.shot(page, "session-classified")


def test_search_results_carry_the_classifier_badge(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions?q=invoice")
    hit = page.locator(".hits .hit", has_text="mail").first
    assert "Embedded instruction: classifier" in hit.locator(".flags").inner_text()


def test_a_board_card_and_its_entry_page_mark_it(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/board")
    card = page.locator(".cards .card", has_text="Invoice routing")
    assert "classifier" in card.locator(".flag-notes").inner_text()
    assert ONLY_BY_MEANING in card.locator("mark.offending").all_inner_texts()
    card.get_by_role("link", name="Invoice routing").click()
    notes = page.locator(".flag-notes")
    assert "classifier" in notes.inner_text() and ONLY_BY_MEANING in notes.locator("mark.offending").all_inner_texts()
