"""Getting into the pages: the login link lands on the board; without the cookie a browser is sent to the
login message, the API keeps its 401; a form write needs the session's CSRF token in its csrf field."""

from __future__ import annotations

from typing import TYPE_CHECKING

import requests

from helpers import browser as b
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def test_the_login_link_lands_on_the_board(browser: Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site)
    try:
        assert page.url == f"{site.url}/board"
        assert page.get_by_role("heading", level=1).count() == 1
        assert page.get_by_role("link", name="Skip to content").count() == 1
        assert page.evaluate("getComputedStyle(document.body).margin") == "0px"  # the stylesheet was served
    finally:
        page.context.close()


def test_no_cookie_means_the_login_message(browser: Browser, site: WebServer) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{site.url}/board")
        assert page.url == f"{site.url}/login"
        assert "kbsync web url" in page.get_by_role("alert").inner_text()
    finally:
        context.close()
    api = requests.get(f"{site.url}/api/v1/status", headers={"Accept": "text/html"}, timeout=10)
    assert api.status_code == 401


def test_a_form_write_needs_the_csrf_field(browser: Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site)
    try:
        csrf = page.locator('meta[name="csrf-token"]').get_attribute("content") or ""
        assert len(csrf) == 64
        path = f"{site.url}/board/new"
        for body in ("title=x", "csrf=" + "0" * 64 + "&title=x"):
            r = page.request.post(path, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"},
                                  max_redirects=0)
            assert r.status == 403 and r.json()["error"]["code"] == "csrf"
        r = page.request.post(path, data=f"csrf={csrf}&title=x", max_redirects=0,
                              headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status == 422  # past the guard: the form itself is refused, beside its fields
    finally:
        page.context.close()
