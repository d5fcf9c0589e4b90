"""The status page in a real browser, with the daemon running: its state, what waits for a person and the
page that settles it, and the last lines of logs/errors.md."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

COPY = "memory/facts.conflict-20250701T100000Z-laptop.md"


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("status"))
    (root / COPY).write_text("# Facts\n\n- editor: vim\n", encoding="utf-8")
    (root / "candidates").mkdir(exist_ok=True)
    (root / "candidates/2025-07-01-notes.md").write_text(
        "# 候选清单 · notes · 2025-07-01\n\n### 标题\n\n- id: c-0123456789\n- 状态: pending\n- 来源: notes:a.md\n"
        "- 路径: a.md\n- 来源日期: 2025-07-01\n- 标记: 无\n- 类型: 方法\n- 主题: x\n- 摘要: \n- 场景: \n"
        "- 置信度: medium\n\n核心内容:\n\n> 正文\n", encoding="utf-8")
    b.commit_all(root, "a list and a conflict copy")
    return root


def test_the_status_page_says_what_runs_and_what_waits(page: Page, site: WebServer) -> None:
    r = site.call("POST", "/logs/errors", body={"message": "推送失败：网络不可达"})
    assert r.status_code == 201, r.text
    page.goto(f"{site.url}/status")
    assert page.locator("#daemon").inner_text() == f"running (pid {site.proc.pid})"
    assert "a list and a conflict copy" in page.locator("dl.fields").inner_text()  # the last commit
    waiting = page.locator("ul.waiting")
    copy = waiting.locator("li", has_text=COPY)
    assert "conflict copy" in copy.inner_text()
    assert copy.get_by_role("link").get_attribute("href") == "/conflicts"
    assert waiting.locator("li", has_text="1 candidate(s) wait").get_by_role("link").get_attribute(
        "href") == "/candidates"
    assert "推送失败：网络不可达" in page.locator("ul.lines").inner_text()
    b.shot(page, "status")


def test_every_action_is_reachable_by_keyboard(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/status")
    b.assert_keyboard_ready(page)
