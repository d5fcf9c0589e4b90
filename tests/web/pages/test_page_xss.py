"""Untrusted text stays text: `<script>`, `onerror=`, `javascript:` payloads planted in every board field, in
both text parts, in a candidate and in logs/errors.md. In the browser nothing runs (window.__pwned stays
unset, the title unchanged, no dialog), the DOM holds no script, no event-handler attribute, no
javascript: link and no foreign image, and the payloads are there as visible text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest

from helpers import browser as b
from helpers.web import WebServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

SCRIPT = "<script>window.__pwned=1;document.title='pwned'</script>"
TAGS = "<img src=x onerror=\"window.__pwned=2\"><svg onload=\"window.__pwned=3\"></svg>"
LINKS = "[l](javascript:window.__pwned=4) [m](JaVaScRiPt&#58;window.__pwned=5) <a href=\"javascript:x()\">a</a>"
P = f"{SCRIPT}{TAGS}\"'><b onmouseover=\"window.__pwned=6\">x</b>"
ITEM = "c-0123456789"
BOARD = f"""# 学习看板

## 长期说明

{P} {LINKS}

## 长期趋势

{P} ![i](javascript:window.__pwned=7) ![j](https://evil.example/x.png) <iframe src="javascript:1"></iframe>

## 学习记录

### T{P}

- 类型: {P}
- 主题: {P}
- 摘要: {P}
- 场景:
  - {P}
- 置信度: {P}
- 状态: {P}
- 来源: {P} {LINKS}
- 来源日期: {P}

核心内容:

{P}

{LINKS}
"""
CANDIDATES = f"""# 候选清单 · notes · 2025-07-01

### C{P}

- id: {ITEM}
- 状态: pending
- 来源: {P}
- 路径: {P}
- 来源日期: 2025-07-01
- 标记: embedded-instruction, {P}
- 可疑行:
  - 第 3 行 [override]: {P}
- 类型: {P}
- 主题: {P}
- 摘要: {P}
- 场景: {P}
- 置信度: medium

核心内容:

> {P} {LINKS}
"""


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("xss"))
    (root / "LEARNING_BOARD.md").write_text(BOARD, encoding="utf-8")
    (root / "candidates").mkdir(exist_ok=True)
    (root / "candidates/2025-07-01-notes.md").write_text(CANDIDATES, encoding="utf-8")
    with (root / "memory/facts.md").open("a", encoding="utf-8") as f:
        f.write(f"- hostile: {P}\n")
    with (root / "logs/errors.md").open("a", encoding="utf-8") as f:
        f.write(f"- 2025-07-01T10:00:00Z {P} {LINKS}\n")
    b.commit_all(root, "hostile text")
    return root


def entry_key() -> str:
    return f"T{P}@{P}"


PAGES = ("/board", "/board?q=script", f"/board/entry?key={quote(entry_key(), safe='')}",
         f"/board/edit?key={quote(entry_key(), safe='')}", "/candidates", f"/candidates/accept?id={ITEM}", "/status", "/memory",
         "/memory?key=hostile&at=memory%2Ffacts.md")

INERT = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  title: document.title,
  scripts: [...document.scripts].filter(s => s.src !== location.origin + "/static/localtime.js").length,
  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].filter(a => a.name.startsWith('on'))
                                                                         .map(a => e.tagName + ' ' + a.name)),
  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))
           .filter(h => !/^(https?:|mailto:|\\/|#|\\?)/i.test(h)),
  images: [...document.images].map(i => i.src).filter(s => !s.startsWith(location.origin + '/')),
  embeds: document.querySelectorAll('main svg, main iframe, main object, main embed, main b').length,
})"""


@pytest.mark.parametrize("path", PAGES)
def test_hostile_text_stays_inert_text(page: Page, site: WebServer, path: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    answer = page.goto(site.url + path)
    assert answer is not None and answer.status == 200, path
    page.wait_for_timeout(200)  # let anything that would run, run
    found = page.evaluate(INERT)
    assert found == {"pwned": None, "title": found["title"], "scripts": 0, "handlers": [], "links": [],
                     "images": [], "embeds": 0}, path
    assert found["title"] != "pwned" and found["title"].endswith(" · kbsync") and dialogs == []
    shown = page.locator("main").inner_text() + "".join(
        page.locator("main input, main textarea").evaluate_all("els => els.map(e => e.value)"))
    assert SCRIPT in shown and "onerror=" in shown, path  # the payload is there, as text
    if path == "/board":
        b.shot(page, "board-hostile-text")
