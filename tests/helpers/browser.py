"""The pages under test in a real browser: Debian's chromium driven by Playwright (never `playwright
install`), a real server on a real workspace, the login link `kbsync web url` prints, and screenshots
under the run's artifact folder ($KBSYNC_ARTIFACTS, else <repo>/.artifacts/; subfolder web/)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from helpers.cli import main_call
from helpers.web import WebServer, configure

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

CHROMIUM = "/usr/bin/chromium"
REPO = Path(__file__).resolve().parent.parent.parent
AXE = REPO / ".venv" / "node" / "node_modules" / "axe-core" / "axe.min.js"  # scripts/test installs it from npm
VIEWPORT: ViewportSize = {"width": 1000, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}


def artifacts() -> Path:
    folder = Path(os.environ.get("KBSYNC_ARTIFACTS") or REPO / ".artifacts") / "web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(page: Page, name: str, *, full_page: bool = True, height: int | None = None) -> Path:
    """A PNG of `page` as <artifacts>/web/<name>.png: the whole page, the viewport, or its top `height` pixels."""
    path = artifacts() / f"{name}.png"
    if height is not None:
        width = page.viewport_size["width"] if page.viewport_size else VIEWPORT["width"]
        page.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": height})
    else:
        page.screenshot(path=str(path), full_page=full_page)
    return path


def launch() -> Iterator[Browser]:
    """One headless chromium for the whole run (a generator for a session-scoped fixture)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def workspace(tmp: Path) -> Path:
    """An initialised workspace whose daemon commits quickly and serves the pages on any free port."""
    from kbsync.app.workspace import init_workspace

    root = tmp / "ws"
    init_workspace(root)
    configure(root, "enabled = true\n", daemon='commit_every = "1s"')
    return root


def serve(root: Path, home: Path, *, daemon: bool = True) -> WebServer:
    """`kbsync run` on `root` (the daemon commits what the pages write), or `kbsync web serve` alone."""
    return WebServer(root, home, command=("run",) if daemon else ("web", "serve"))


def login_url(server: WebServer) -> str:
    got = main_call("web", "url", ws=server.root, env={"HOME": str(server.root.parent)})
    assert got.returncode == 0, got.stderr
    return got.stdout.strip()


def open_logged_in(browser: Browser, server: WebServer, *, lang: str = "en", phone: bool = False,
                   bypass_csp: bool = False, timeout_ms: float = 15_000) -> Page:
    """A new browser context (its own cookies, `lang` its Accept-Language) that opened a fresh login link: it
    lands on the board. `bypass_csp`: the test may inject a script of its own (axe-core); `timeout_ms`: how
    long an action or a wait may take before it fails."""
    context = browser.new_context(viewport=PHONE if phone else VIEWPORT, locale=lang.split(",")[0].split(";")[0],
                                  extra_http_headers={"Accept-Language": lang}, bypass_csp=bypass_csp)
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    page.goto(login_url(server))
    return page


def git_log(root: Path, *paths: str) -> list[str]:
    """Subjects of the commits touching `paths`, newest first."""
    out = subprocess.run(["git", "-C", str(root), "log", "--format=%s", "--", *paths], check=True,
                         capture_output=True, text=True).stdout
    return out.splitlines()


def git_clean(root: Path, path: str) -> bool:
    """True when `path` is committed as it is on disk."""
    out = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", path], check=True,
                         capture_output=True, text=True).stdout
    return not out.strip()


def commit_all(root: Path, message: str) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", message], check=True)


def git_show(root: Path, spec: str) -> str:
    return subprocess.run(["git", "-C", str(root), "show", spec], check=True, capture_output=True,
                          text=True).stdout


_UNNAMED_OR_UNFOCUSABLE = """() => [...document.querySelectorAll('button, input, select, textarea')]
    .filter(e => e.type !== 'hidden' && (e.tabIndex < 0 || !e.labels && !e.textContent.trim()
                                          || (e.labels && e.labels.length === 0 && e.tagName !== 'BUTTON')))
    .map(e => e.outerHTML)"""


def fact_keys(page: Page) -> list[str]:
    """The keys of the memory page's listed facts, once the page has loaded: an action's page may have its
    address but not its table yet, and read at once it listed nothing (seen under CI's load)."""
    page.wait_for_load_state()
    return page.locator("table.facts tbody th").all_inner_texts()


def assert_keyboard_ready(page: Page) -> None:
    """Every action of the page is reachable by keyboard: each control focusable and named (a label, or a
    button's text), the actions real buttons and links (no click handlers, no `href="#"`), and the first Tab
    lands on the skip link."""
    assert page.evaluate(_UNNAMED_OR_UNFOCUSABLE) == []
    assert re.search(r"onclick|href=\"#\"", page.content()) is None
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") in ("Skip to content", "跳到正文")


def violations(page: Page) -> list[dict[str, Any]]:
    """axe's violations of serious or critical impact (and empty table headers) on the page as it stands (the
    page's context opened with bypass_csp, so that the script can be injected)."""
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))")
    return [v for v in found if v["impact"] in ("serious", "critical") or v["id"] == "empty-table-header"]
