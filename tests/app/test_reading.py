"""app.reading: one item by reference, and the strict check of a workspace path given from outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.board import payload
from helpers.cli import Cli
from kbsync.app import reading
from kbsync.app.workspace import open_workspace
from kbsync.errors import InputError


def test_a_reference_names_a_session_a_board_entry_or_a_path() -> None:
    assert reading.kind_of("20250611-0930-abcdef0") == "session"
    assert reading.kind_of("发布前确认锁文件@2025-06-11") == "board"
    assert reading.kind_of("发布前确认锁文件@2025年6月11日") == "board"
    assert reading.kind_of("someone@example.com") == "file"
    assert reading.kind_of("sessions/2025-06-11/0930-abcdef0-x@2025-06-11.md") == "file"
    assert reading.kind_of("memory/facts.md") == "file"
    assert reading.kind_of("LEARNING_BOARD.md#发布前确认锁文件@2025-06-11") == "board"  # as search names it
    assert reading.kind_of("0b5c9f7e-3a1d-4c2e-9f10-6d2b8a7c4e51") == "session"  # a raw id, as saved


def test_each_kind_is_read_in_full(ws_root: Path, cli: Cli) -> None:
    done = json.loads(cli("session", "save", "--json", ws=ws_root,
                          stdin=json.dumps({"session_id": "r", "sections": {"结论": "全文在此"}})).stdout)
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(payload())).returncode == 0
    ws = open_workspace(str(ws_root), None)
    assert "全文在此" in reading.read(ws, done["id"]).text
    assert reading.read(ws, "r").path == done["path"]  # the raw id it was saved under, as write_section takes it
    assert reading.read(ws, done["path"]).path == done["path"]
    entry = reading.read(ws, "发布前确认锁文件@2025/6/11")
    assert entry.path == "LEARNING_BOARD.md" and "锁文件未释放导致发布失败" in entry.text
    assert reading.read(ws, "LEARNING_BOARD.md#发布前确认锁文件@2025-06-11").text == entry.text  # a search hit's key
    assert reading.read_memory(ws, "facts").path == "memory/facts.md"


@pytest.mark.parametrize(("given", "says"), [
    ("", "relative to the workspace"), ("/etc/hostname", "relative to the workspace"),
    ("memory\\facts.md", "relative to the workspace"), ("memory//facts.md", ".. part"),
    ("./memory/facts.md", ".. part"), ("memory/../memory/facts.md", ".. part"),
    (".git/HEAD.md", "own state"), (".kbsync/notes.md", "own state"), ("memory", "Markdown"),
    ("linked/facts.md", "a symlink"), ("memory/outside.md", "a symlink"), ("sessions.md", "no such file"),
])
def test_a_path_from_outside_is_refused_saying_why(ws_root: Path, given: str, says: str, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("outside", encoding="utf-8")
    (ws_root / "memory" / "outside.md").symlink_to(tmp_path / "elsewhere.md")
    (ws_root / "linked").symlink_to(ws_root / "memory")  # even a link that stays inside is not followed
    with pytest.raises(InputError, match=says):
        reading.content_path(open_workspace(str(ws_root), None), given)


def test_an_entity_name_cannot_leave_its_folder(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)
    (ws_root / "memory" / "entities").mkdir(exist_ok=True)
    (ws_root / "memory" / "entities" / "张三.md").write_text("# 张三\n- 法务\n", encoding="utf-8")
    assert reading.entity_names(ws) == ["张三"]
    assert "法务" in reading.read_entity(ws, "张三").text
    for bad in ("../facts", ".hidden", "a/b"):
        with pytest.raises(InputError):
            reading.read_entity(ws, bad)
