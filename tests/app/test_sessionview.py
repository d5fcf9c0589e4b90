"""app.sessionview: a session with its frontmatter rows, sections, parent and children; its images, read only
inside the workspace and through no symlink; its HTML export."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kbsync.app import sessions, sessionview
from kbsync.app.workspace import open_workspace
from kbsync.errors import InputError, NotFoundError
from kbsync.store.workspace import Workspace

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    return open_workspace(str(ws_root), None)


def _split_one(ws: Workspace) -> tuple[str, list[str]]:
    done = sessions.save_session(ws, {"session_id": "p", "ts": "2025-06-11T09:00:00+08:00", "title": "长会话",
                                      "tags": ["部署"], "sections": {"结论": "开头\n\n### 第一\n甲\n\n### 第二\n乙"}})
    sid = str(done.record["id"])
    split = sessions.split_session(ws, sid)
    return sid, [c.sid for c in split.children]


def test_a_split_session_links_its_children_and_they_link_back(ws: Workspace) -> None:
    sid, kids = _split_one(ws)
    detail = sessionview.session_detail(ws, sid)
    assert detail.title == "长会话" and detail.parent is None
    assert [(c.id, c.title) for c in detail.children] == [(kids[0], "第一"), (kids[1], "第二")]
    assert ("tags", "部署") in detail.rows and ("id", sid) in detail.rows
    assert dict(detail.sections)["结论"] == "开头"
    child = sessionview.session_detail(ws, kids[0])
    assert child.parent == sessionview.Link(sid, "长会话", True) and child.children == []


def test_a_parent_the_workspace_does_not_hold_is_shown_as_missing(ws: Workspace) -> None:
    done = sessions.save_session(ws, {"session_id": "o", "parent": "20240101-0000-abcdef0", "sections": {"结论": "x"}})
    detail = sessionview.session_detail(ws, str(done.record["id"]))
    assert detail.parent == sessionview.Link("20240101-0000-abcdef0", "20240101-0000-abcdef0", False)


def test_image_links_name_workspace_paths_and_nothing_else() -> None:
    doc = "sessions/2025-06-11/0900-abcdef0-x.md"
    assert sessionview.image_path(doc, "img/a.png") == "sessions/2025-06-11/img/a.png"
    assert sessionview.image_path(doc, "../../artifacts/%E5%9B%BE.png") == "artifacts/图.png"
    for src in ("../../../etc/passwd.png", "https://example.com/a.png", "/etc/a.png", "#x", "data:image/png;base64,",
                "//host/a.png", ""):
        assert sessionview.image_path(doc, src) is None, src


def test_an_image_is_served_only_from_inside_the_workspace_through_no_symlink(ws: Workspace, tmp_path: Path) -> None:
    (ws.root / "artifacts" / "a.png").write_bytes(PNG)
    got = sessionview.workspace_image(ws, "artifacts/a.png")
    assert got.data == PNG and got.media_type == "image/png"
    outside = tmp_path / "secret.png"
    outside.write_bytes(PNG)
    os.symlink(outside, ws.root / "artifacts" / "link.png")
    os.symlink(tmp_path, ws.root / "artifacts" / "dir")
    (ws.root / "artifacts" / "page.svg").write_text("<svg/>", encoding="utf-8")
    for rel, says in (("artifacts/link.png", "symlink"), ("artifacts/dir/secret.png", "symlink"),
                      ("../secret.png", "climbs out"), (".kbsync/x.png", "kbsync's own folder"),
                      (".git/x.png", "git's folder"), ("artifacts/page.svg", "not one of the image types"),
                      ("index.md", "not one of the image types")):
        with pytest.raises(InputError, match=says):
            sessionview.workspace_image(ws, rel)
    with pytest.raises(NotFoundError):
        sessionview.workspace_image(ws, "artifacts/gone.png")


def test_the_export_is_one_page_with_the_images_inlined(ws: Workspace) -> None:
    (ws.root / "artifacts" / "a.png").write_bytes(PNG)
    done = sessions.save_session(ws, {"session_id": "e", "title": "导出", "sections": {"结论": "![图](../../artifacts/a.png)"}})
    page = sessionview.export_page(ws, str(done.record["id"]))
    assert page.filename.endswith("-导出.html") and "data:image/png;base64," in page.html
