"""Accessibility of every page, checked by axe-core (npm's package, injected into the page in Debian's
chromium): no violation of serious or critical impact on any page (and no empty table header), in English
and in Chinese, on a workspace holding entries, sessions, candidates and facts; and the check itself finds
what it should on a page made to fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from helpers import browser as b
from helpers.board import payload
from helpers.cli import main_call

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from helpers.web import WebServer

SESSION: dict[str, str] = {}
PAGES = ("/board", "/board?q=%E9%94%81%E6%96%87%E4%BB%B6", "/board/entry?key={key}", "/board/edit?key={key}",
         "/board/new", "/candidates", "/sessions", "/sessions?q=%E5%90%88%E5%90%8C", "/sessions/{sid}",
         "/memory", "/memory?q=%E6%AD%A5&page=2", "/conflicts", "/status", "/stats", "/review", "/login")


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("axe"))
    for i in range(3):
        entry = payload(title=f"发布前确认锁文件 {i}", core_content=f"第 {i} 条。\n\n```\nrm -f .lock\n```\n")
        assert main_call("board", "add", ws=root, stdin=json.dumps(entry, ensure_ascii=False)).returncode == 0
    for i in range(3):
        session = {"session_id": f"axe-{i}", "ts": f"2025-06-1{i}T14:32:00+08:00", "title": f"合同风险梳理 {i}",
                   "tags": ["合同", "法务"], "summary": "三条付款风险",
                   "sections": {"用户输入": "审阅合同", "结论": "第二条需法务确认", "待办": "- [ ] 法务确认\n- [x] 通知"}}
        done = main_call("session", "save", "--json", ws=root, stdin=json.dumps(session, ensure_ascii=False))
        assert done.returncode == 0, done.stderr
        SESSION["id"] = json.loads(done.stdout)["id"]
    assert main_call("memory", "set", "language", "中文", ws=root).returncode == 0
    steps = "".join(f"- 步骤{n:02d}: 第 {n} 步\n" for n in range(60))  # the memory page's second page: its pager
    (root / "memory/entities/runbook.md").write_text(f"# Runbook\n\n{steps}", encoding="utf-8")
    notes = root.parent / "notes"
    notes.mkdir()
    (notes / "retry.md").write_text("# 重试要有上限\n\n网络抖动时指数退避，最多五次。\n", encoding="utf-8")
    with (root / ".kbsync" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[[scan.sources]]\nname = "notes"\npath = "{notes}"\n')
    assert main_call("scan", ws=root, cwd=root).returncode == 0
    board_text = (root / "LEARNING_BOARD.md").read_text(encoding="utf-8")  # a conflict of each shape
    (root / "LEARNING_BOARD.conflict-20250611T143207Z-a1b2c3.md").write_text(
        board_text.replace("第 0 条。", "第 0 条，另一台机器。"), encoding="utf-8")
    (root / "artifacts").mkdir(exist_ok=True)
    (root / "artifacts/plan.md").write_text("# 计划\n\n周一发布。\n", encoding="utf-8")
    (root / "artifacts/plan.conflict-20250611T143207Z-a1b2c3.md").write_text("# 计划\n\n周三发布。\n", encoding="utf-8")
    b.commit_all(root, "a workspace to check")
    return root


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_no_serious_or_critical_violation_on_any_page(browser: Browser, site: WebServer, lang: str) -> None:
    assert b.AXE.exists(), f"{b.AXE} is missing: scripts/test installs axe-core from npm"
    page = b.open_logged_in(browser, site, lang=lang, bypass_csp=True)
    found = {}
    try:
        key = quote("发布前确认锁文件 0@2025-06-11", safe="")
        for path in PAGES:
            page.goto(site.url + path.format(key=key, sid=SESSION["id"]))
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")  # folded parts too
            bad = b.violations(page)
            if bad:
                found[path] = bad
    finally:
        page.context.close()
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


def test_the_check_finds_violations_on_a_page_made_to_fail(browser: Browser) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content('<html><body><img src="x.png"><table><tr><th></th></tr><tr><td>1</td></tr></table>'
                         '<div style="overflow:scroll;height:20px"><p>a</p><p>b</p><p>c</p></div></body></html>')
        assert {v["id"] for v in b.violations(page)} >= {"image-alt", "html-has-lang", "empty-table-header"}
    finally:
        context.close()
