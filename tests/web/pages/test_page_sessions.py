"""The sessions pages in a real browser: a session with Chinese text, a table and an image, its parent and
children after a split, its HTML export; browsing by tag with counts; search with the words marked; the
image route serving nothing outside the workspace or through a symlink."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers import browser as b
from helpers.web import WebServer
from kbsync.app import sessions
from kbsync.app.workspace import open_workspace

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page



def png(width: int, height: int) -> bytes:
    """A PNG of a blue band on white, made here so that the test carries no binary file."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes((40, 90, 200) if height // 3 <= y < 2 * height // 3 else (255, 255, 255)) * width
                    for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PNG = png(240, 60)
BODY = ("今天讨论了合同审查流程的风险。\n\n| 阶段 | 负责人 |\n| --- | --- |\n| 起草 | 法务部 |\n| 审批 | 总经理 |\n\n"
        "![流程图](../../artifacts/流程.png)\n\n<script>document.title='x'</script>")


def _fill(root: Path) -> dict[str, str]:
    ws = open_workspace(str(root), None)
    (root / "artifacts" / "流程.png").write_bytes(PNG)
    (root.parent / "outside.png").write_bytes(PNG)
    os.symlink(root.parent / "outside.png", root / "artifacts" / "link.png")
    ids = {}
    for raw, ts, tags, title, text in (
            ("contract", "2025-06-11T09:30:00+00:00", ["合同", "法务"], "合同审查会议", BODY),
            ("deploy", "2025-06-12T10:00:00+00:00", ["部署"], "部署复盘", "锁文件没有释放，发布失败。\n\n- [ ] 补测试\n- [x] 回滚"),
            ("old", "2025-05-02T08:00:00+00:00", ["部署"], "五月的部署", "推送失败后重试。"),
            ("long", "2025-06-13T08:00:00+00:00", ["拆分"], "长会话", "开头\n\n### 第一部分\n甲\n\n### 第二部分\n乙")):
        done = sessions.save_session(ws, {"session_id": raw, "ts": ts, "tags": tags, "title": title,
                                          "summary": title, "sections": {"结论": text}})
        ids[raw] = str(done.record["id"])
    split = sessions.split_session(ws, ids["long"])
    ids["child"] = split.children[0].sid
    return ids


@pytest.fixture(scope="module")
def site_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = b.workspace(tmp_path_factory.mktemp("sessions"))
    _fill(root)
    return root


@pytest.fixture(scope="module")
def ids(site: WebServer) -> dict[str, str]:
    ws = open_workspace(str(site.root), None)
    found = {s.title: s.id for s in sessions.list_sessions(ws, limit=50).sessions}
    return {"contract": found["合同审查会议"], "long": found["长会话"], "child": found["第一部分"],
            "deploy": found["部署复盘"]}


def test_a_session_with_chinese_a_table_and_an_image(page: Page, site: WebServer, ids: dict[str, str]) -> None:
    page.goto(f"{site.url}/sessions/{ids['contract']}")
    assert page.get_by_role("heading", level=1).inner_text() == "合同审查会议"
    folded = page.locator("details.frontmatter")
    assert folded.get_attribute("open") is None  # the conversation first, the frontmatter table folded below
    assert page.evaluate("document.querySelector('main section.rendered').compareDocumentPosition("
                         "document.querySelector('details.frontmatter')) & Node.DOCUMENT_POSITION_FOLLOWING")
    folded.locator("summary").click()
    front = page.locator("table.frontmatter")
    assert front.locator("tr", has_text="tags").locator("td").inner_text() == "合同, 法务"
    assert front.locator("tr", has_text="id").locator("td").inner_text() == ids["contract"]
    section = page.locator("section.rendered", has=page.get_by_role("heading", name="结论"))
    assert "合同审查流程的风险" in section.inner_text()
    assert section.locator("table td").all_inner_texts() == ["起草", "法务部", "审批", "总经理"]
    img = section.get_by_role("img", name="流程图")
    assert img.evaluate("i => i.complete && i.naturalWidth") == 240
    assert "<script>" in section.inner_text() and page.title() != "x"  # shown as text, never run
    b.shot(page, "session")
    export = page.get_by_role("link", name="Export HTML")
    got = page.request.get(site.url + (export.get_attribute("href") or ""))
    assert got.ok and "attachment" in got.headers["content-disposition"]
    assert "data:image/png;base64," in got.text() and "法务部" in got.text()


def test_split_sessions_link_parent_and_children(page: Page, site: WebServer, ids: dict[str, str]) -> None:
    page.goto(f"{site.url}/sessions/{ids['long']}")
    family = page.locator("nav.family")
    assert family.get_by_role("link").all_inner_texts() == ["第一部分", "第二部分"]
    family.get_by_role("link", name="第一部分").click()
    assert page.url.endswith(f"/sessions/{ids['child']}")
    page.locator("nav.family").get_by_role("link", name="长会话").click()
    assert page.url.endswith(f"/sessions/{ids['long']}")


def test_every_action_is_reachable_by_keyboard(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions")
    b.assert_keyboard_ready(page)
    page.goto(f"{site.url}/sessions?tag=部署")
    b.assert_keyboard_ready(page)


def test_images_only_from_inside_the_workspace(page: Page, site: WebServer) -> None:
    assert page.request.get(f"{site.url}/images/artifacts/%E6%B5%81%E7%A8%8B.png").headers["content-type"] == "image/png"
    for path, status in (("artifacts/link.png", 422), ("artifacts/..%2F..%2Foutside.png", 422),
                         (".kbsync/web-token", 422), ("index.md", 422), ("artifacts/none.png", 404)):
        assert page.request.get(f"{site.url}/images/{path}").status == status, path


def test_browse_by_tag_and_search_with_highlights(page: Page, site: WebServer) -> None:
    page.goto(f"{site.url}/sessions")
    months = page.get_by_role("navigation", name="By month, By tag")
    assert "2025-06" in months.inner_text() and "2025-05" in months.inner_text()
    tag = months.locator("li", has=page.get_by_role("link", name="部署", exact=True))
    assert tag.locator(".counts").inner_text() == "2"
    tag.get_by_role("link").click()
    listed = page.locator("ol.cards h3").all_inner_texts()
    assert listed == ["部署复盘", "五月的部署"]
    b.shot(page, "sessions")
    page.get_by_role("link", name="2025-06", exact=True).click()
    assert page.locator("ol.cards h3").all_inner_texts() == ["部署复盘"]
    page.goto(f"{site.url}/sessions")
    page.get_by_label("Words, or filters such as tag:git").fill("合同")
    page.get_by_role("button", name="Search").click()
    hits = page.locator("li.hit")
    assert hits.first.get_by_role("link").inner_text() == "合同审查会议"
    assert set(hits.first.locator("mark").all_inner_texts()) == {"合同"}
    b.shot(page, "sessions-search")
    page.get_by_label("Words, or filters such as tag:git").fill("合同 since:2025-13")
    page.get_by_role("button", name="Search").click()
    assert "since:2025-13 is not a date" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Words, or filters such as tag:git").input_value() == "合同 since:2025-13"
    page.get_by_label("Words, or filters such as tag:git").fill("合同")
    page.get_by_role("button", name="Search").click()
    hits.first.get_by_role("link").click()
    assert page.get_by_role("heading", level=1).inner_text() == "合同审查会议"


def test_labels_follow_the_browsers_language_and_a_phone_can_read_it(browser: Browser, site: WebServer) -> None:
    page = b.open_logged_in(browser, site, lang="zh-CN", phone=True)
    try:
        page.goto(f"{site.url}/sessions")
        assert page.get_by_role("heading", level=1).inner_text() == "会话"
        assert page.get_by_role("button", name="搜索").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scrolling
        b.shot(page, "sessions-phone")
    finally:
        page.context.close()


def test_tasks_as_boxes_times_in_the_viewers_zone_and_hits_as_links(browser: b.Browser, site: WebServer,
                                                                     ids: dict[str, str]) -> None:
    context = browser.new_context(timezone_id="Asia/Shanghai", locale="en-US")
    try:
        page = context.new_page()
        page.goto(b.login_url(site))
        page.goto(f"{site.url}/sessions/{ids['deploy']}")
        assert page.get_by_role("img", name="to do").count() == 1 and page.get_by_role("img", name="done").count() == 1
        assert "补测试" in page.locator("li", has=page.get_by_role("img", name="to do")).inner_text()
        shown = page.locator("h1 + p time")
        assert shown.get_attribute("datetime") == "2025-06-12T10:00:00+00:00"
        assert "6:00" in shown.inner_text() and "PM" in shown.inner_text()  # 10:00 UTC in Shanghai, the viewer's zone
        assert shown.get_attribute("title") == "2025-06-12 10:00 (UTC+00:00)"
        page.goto(f"{site.url}/board?q=%E9%83%A8%E7%BD%B2%E5%A4%8D%E7%9B%98")  # the session is found elsewhere
        page.locator(".elsewhere").get_by_role("link", name="部署复盘").click()
        assert page.url.endswith(f"/sessions/{ids['deploy']}")
    finally:
        context.close()
