"""The pages' browser tests: one chromium and a real server per module (`site`, the daemon
committing what the pages write), each test in a fresh browser context logged in by its own link."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

from helpers import browser as b
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium a module (about half a second to start), closed when its tests end: Playwright's sync API
    marks its event loop as running in this thread while it is open, and the tests after these run asyncio
    loops of their own here (a session-wide browser made them fail: "Already running asyncio")."""
    if not Path(b.CHROMIUM).exists():
        pytest.skip(f"{b.CHROMIUM} is not installed (apt-get install chromium)")
    yield from b.launch()


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's workspace; a module fills it (a fixture of its own) before `site` starts."""
    return b.workspace(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def site(site_root: Path, home: Path) -> Iterator[WebServer]:
    server = b.serve(site_root, home)
    yield server
    server.stop()


@pytest.fixture
def page_timeout_ms() -> float:
    """How long a page's action or wait may take before the test fails (a module of heavy pages asks more)."""
    return 15_000


@pytest.fixture
def page(browser: Browser, site: WebServer, page_timeout_ms: float) -> Iterator[Page]:
    p = b.open_logged_in(browser, site, timeout_ms=page_timeout_ms)
    yield p
    p.context.close()
