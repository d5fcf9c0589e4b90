"""A login that lasts: it survives a restart of the daemon, ends when the person logs out, and a form posted
after it ended is kept and offered back once the person has logged in again. Real chromium, real daemon."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.board import payload
from helpers.cli import main_call
from helpers.web import WebServer, configure, free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

KEY_URL = "/board/edit?key=%E5%8F%91%E5%B8%83%E5%89%8D%E7%A1%AE%E8%AE%A4%E9%94%81%E6%96%87%E4%BB%B6%402025-06-11"


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace served on a fixed port (a restart keeps its address, as the default port does)."""
    root = b.workspace(tmp_path_factory.mktemp("login"))
    configure(root, "enabled = true\n", daemon='commit_every = "1s"', port=free_port())
    assert main_call("board", "add", ws=root, stdin=json.dumps(payload(), ensure_ascii=False)).returncode == 0
    b.commit_all(root, "one entry")
    return root


def test_a_login_survives_a_restart_of_the_daemon(page: Page, site: WebServer) -> None:
    assert page.url.endswith("/board")
    site.restart()
    page.goto(f"{site.url}/sessions")
    assert page.url.endswith("/sessions") and page.get_by_role("button", name="Log out").count() == 1
    stored = list((site.root / ".kbsync" / "web-sessions").iterdir())
    assert stored and all(p.stat().st_mode & 0o077 == 0 for p in stored)  # private, and only hashes of ids
    cookie = next(c for c in page.context.cookies() if c["name"].startswith("kbsync_session_"))
    assert not any(cookie["value"] in p.name or cookie["value"] in p.read_text() for p in stored)
    assert cookie["expires"] > 0  # a persistent cookie, for [web] session_days


def test_logging_out_ends_the_login(page: Page, site: WebServer) -> None:
    page.get_by_role("button", name="Log out").click()
    assert "You are logged out." in page.get_by_role("alert").inner_text()
    assert page.locator("html").get_attribute("lang") == "en"
    page.goto(f"{site.url}/board")
    assert page.url.endswith("/login") and "Not logged in." in page.get_by_role("alert").inner_text()


def test_a_form_sent_after_the_login_ended_is_kept_and_offered_back(page: Page, site: WebServer) -> None:
    page.goto(site.url + KEY_URL)
    page.get_by_label("Summary").fill("登录过期时填写的摘要")
    rotated = main_call("web", "token", "--rotate", ws=site.root)  # ends every browser session
    assert rotated.returncode == 0, rotated.stderr
    page.get_by_role("button", name="Save").click()
    alert = page.get_by_role("alert").first.inner_text()
    assert "Your login has ended" in alert and "kept" in alert and "kbsync web url" in alert
    board = (site.root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "登录过期时填写的摘要" not in board  # nothing acted on
    page.goto(b.login_url(site))  # the same browser logs in again
    assert page.url.endswith("/login/resume")
    assert page.get_by_role("cell", name="登录过期时填写的摘要").count() == 1
    b.shot(page, "login-resume")
    page.get_by_role("button", name="Send it again").click()
    assert page.get_by_role("status").inner_text() == "Saved."
    assert "登录过期时填写的摘要" in (site.root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    page.goto(site.url + "/login/resume")  # offered once
    assert "No kept form is waiting" in page.content()


def test_a_used_login_link_is_a_page_that_says_what_to_do(browser: Browser, site: WebServer) -> None:
    link = b.login_url(site)
    context = browser.new_context()
    try:
        p = context.new_page()
        p.goto(link)
        p.goto(link)
        assert "used already" in p.get_by_role("alert").inner_text() and "kbsync web url" in p.content()
    finally:
        context.close()
