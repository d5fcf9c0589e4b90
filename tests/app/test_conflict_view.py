"""app.conflicts.side_by_side: both versions aligned with the changed words marked, and the choices that apply."""

from __future__ import annotations

from pathlib import Path

from kbsync.app import conflicts
from kbsync.app.workspace import open_workspace

COPY = "memory/facts.conflict-20250611T143207Z-a1b2c3.md"


def test_both_versions_line_by_line_and_keep_both_for_an_entry_file(ws_root: Path) -> None:
    (ws_root / "memory" / "facts.md").write_text("# 长期事实\n\n- 项目名: Alpha\n", encoding="utf-8")
    (ws_root / COPY).write_text("# 长期事实\n\n- 项目名: Beta\n- 语言: 中文\n", encoding="utf-8")
    ws = open_workspace(str(ws_root), None)
    shown = conflicts.side_by_side(ws, str(ws.path(COPY)))
    assert shown.keeps == ("mine", "theirs", "both")
    assert shown.view.item.mine.machine == "a1b2c3" and shown.view.item.mine.time == "2025-06-11T14:32:07Z"
    assert [r.kind for r in shown.rows] == ["same", "same", "changed", "added"]
    changed = shown.rows[2]
    assert [s.text for s in changed.old.segments if s.marked] == ["Alpha"]  # type: ignore[union-attr]
    assert [s.text for s in changed.new.segments if s.marked] == ["Beta"]  # type: ignore[union-attr]


def test_other_files_cannot_keep_both_and_a_status_conflict_only_mine(ws_root: Path) -> None:
    (ws_root / "artifacts" / "plan.md").write_text("a\n", encoding="utf-8")
    (ws_root / "artifacts" / "plan.conflict-20250611T143207Z-a1b2c3.md").write_text("b\n", encoding="utf-8")
    ws = open_workspace(str(ws_root), None)
    assert conflicts.side_by_side(ws, str(ws.path("artifacts/plan.md"))).keeps == ("mine", "theirs")
    marked = ws_root / "sessions" / "2025-06-11" / "0900-abcdef0-x.md"
    marked.parent.mkdir(parents=True)
    marked.write_text("---\nid: 20250611-0900-abcdef0\nts: 2025-06-11T09:00:00+08:00\nrole: assistant\nparent: null\n"
                      "tags: []\nstatus: conflict\nsummary: \"\"\n---\n\n## 结论\n\nx\n", encoding="utf-8")
    status = conflicts.side_by_side(ws, str(marked))
    assert status.keeps == ("mine",) and status.rows == []
    assert conflicts.read_settled(ws, str(ws.path("artifacts/plan.md"))) == "a\n"
