"""A stale edit form never overwrites a newer change: the form is opened, the command line changes the same
entry, the form is saved. Nothing is saved; the page says so and shows the newer version beside the person's,
keeps what they typed, and a second save (now knowingly based on the newer version) goes through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from helpers import browser as b
from helpers.board import payload
from helpers.cli import main_call
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

BOARD = "LEARNING_BOARD.md"
KEY = "发布前确认锁文件@2025-06-11"


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("stale"))
    done = main_call("board", "add", ws=root, stdin=json.dumps(payload(), ensure_ascii=False))
    assert done.returncode == 0, done.stderr
    b.commit_all(root, "one entry")
    return root


def test_a_stale_form_is_refused_and_shows_both_versions(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/board/edit?key=%E5%8F%91%E5%B8%83%E5%89%8D%E7%A1%AE%E8%AE%A4%E9%94%81%E6%96%87%E4%BB%B6"
              "%402025-06-11")
    page.get_by_label("Summary").fill("表单里的摘要")
    newer = payload(summary="命令行改过的摘要", confidence="low")
    assert main_call("board", "update", KEY, ws=site.root,
                  stdin=json.dumps(newer, ensure_ascii=False)).returncode == 0
    page.get_by_role("button", name="Save").click()
    assert "changed since" in page.get_by_role("alert").inner_text()
    stale = page.locator("section.stale")
    assert stale.get_by_role("heading", name="Changed since you opened this form").count() == 1
    rows = {r.locator("th").inner_text(): (r.locator("td.newer").inner_text(), r.locator("td.yours").inner_text())
            for r in stale.locator("tbody tr").all()}
    assert rows["Summary"] == ("命令行改过的摘要", "表单里的摘要")
    assert rows["Confidence"] == ("low", "high")
    assert page.get_by_label("Summary").input_value() == "表单里的摘要"  # what was typed is kept
    text = (site.root / BOARD).read_text(encoding="utf-8")
    assert "命令行改过的摘要" in text and "表单里的摘要" not in text  # the newer change survives
    b.shot(page, "entry-form-stale")
    page.get_by_role("button", name="Save").click()  # now based on the newer version: saved
    assert page.get_by_role("status").inner_text() == "Saved."
    text = (site.root / BOARD).read_text(encoding="utf-8")
    assert "表单里的摘要" in text and "命令行改过的摘要" not in text


def test_renaming_an_entry_in_the_form_keeps_its_counters(page: Page, site: WebServer) -> None:
    key = "改名前@2025-06-12"
    assert main_call("board", "add", ws=site.root, stdin=json.dumps(payload(title="改名前", source_date="2025-06-12"),
                                                                ensure_ascii=False)).returncode == 0
    site.call("POST", f"/board/entries/{quote(key, safe='')}/feedback", body={"vote": "helpful"})
    page.goto(f"{site.url}/board/edit?key={quote(key, safe='')}")
    assert key in page.locator("#key-note").inner_text()
    keep = page.get_by_label("Keep this entry's counters (helpful, harmful, applied) under the new key")
    assert keep.is_checked()
    page.get_by_label("Title").fill("改名后")
    page.get_by_role("button", name="Save").click()
    assert page.get_by_role("heading", level=1).inner_text() == "改名后"
    shown = site.call("GET", f"/board/entries/{quote('改名后@2025-06-12', safe='')}").json()
    assert shown["feedback"]["helpful"] == 1
