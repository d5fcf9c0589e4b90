"""repair_file on disk: locks, stale locks, backups, unparseable files, dry runs; index rebuild."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from helpers.cli import Cli
from kbsync.config import Config
from kbsync.core import indexmd
from kbsync.store.rebuild import rebuild_index
from kbsync.store.repairfile import repair_file
from kbsync.store.sessions import save_session
from kbsync.store.workspace import Workspace
from tests.core.test_repair_cases import BODY, REL, VALID

DIRTY = VALID.replace("## 结论", "### 结论")


def put(root: Path, text: str, rel: str = REL) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def lock(p: Path, pid: int, expire: float) -> Path:
    lk = p.with_name(p.name + ".lock")
    lk.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "expire": expire}))
    return lk


def test_a_file_under_a_fresh_lock_is_skipped_untouched(ws_root: Path) -> None:
    p = put(ws_root, DIRTY)
    lock(p, os.getpid(), time.time() + 60)
    out = repair_file(Workspace(ws_root), REL)
    assert out.status == "locked" and p.read_text(encoding="utf-8") == DIRTY


def test_a_stale_lock_is_cleared_and_the_file_repaired(ws_root: Path) -> None:
    p = put(ws_root, DIRTY)
    lk = lock(p, 2**22 + 12345, time.time() + 60)  # a pid that does not exist
    out = repair_file(Workspace(ws_root), REL)
    assert out.status == "repaired" and p.read_text(encoding="utf-8") == VALID and not lk.exists()


def test_repair_keeps_the_previous_bytes_and_leaves_no_temp(ws_root: Path) -> None:
    p = put(ws_root, DIRTY)
    assert repair_file(Workspace(ws_root), REL).status == "repaired"
    backups = list((ws_root / ".kbsync" / "backup").rglob(p.name))
    assert [b.read_text(encoding="utf-8") for b in backups] == [DIRTY]
    assert not [q for q in p.parent.iterdir() if q.name.endswith((".tmp", ".lock"))]


def test_unparseable_file_stays_byte_identical_with_its_mtime(ws_root: Path, cli: Cli) -> None:
    broken = VALID.replace("tags: [合同, 风险]", "tags: [合同, 风险")
    p = put(ws_root, broken)
    before = p.stat().st_mtime_ns
    res = cli("-w", str(ws_root), "repair", REL, cwd=ws_root)
    assert res.returncode == 1 and f"{REL}:" in res.stdout and "does not parse" in res.stdout
    assert p.read_text(encoding="utf-8") == broken and p.stat().st_mtime_ns == before


def test_rebuilt_frontmatter_is_logged_in_errors_md(ws_root: Path) -> None:
    put(ws_root, BODY)
    assert repair_file(Workspace(ws_root), REL).status == "repaired"
    log = (ws_root / "logs" / "errors.md").read_text(encoding="utf-8")
    assert REL in log and "status: conflict" in log and log.endswith("\n") and log.count("\n") == 1


def test_dry_run_prints_a_diff_and_writes_nothing(ws_root: Path, cli: Cli) -> None:
    p = put(ws_root, DIRTY)
    res = cli("-w", str(ws_root), "repair", "--dry-run", str(p))
    assert res.returncode == 0
    assert f"--- a/{REL}" in res.stdout and "-### 结论" in res.stdout and "+## 结论" in res.stdout
    assert p.read_text(encoding="utf-8") == DIRTY and not (ws_root / ".kbsync" / "backup").exists()


def test_index_rebuild_one_row_per_session_sorted_by_utc(ws_root: Path, cli: Cli) -> None:
    ws = Workspace(ws_root, Config())
    save_session(ws, {"session_id": "b", "title": "late", "ts": "2025-06-11T10:00:00+08:00"})  # 02:00 UTC
    save_session(ws, {"session_id": "a", "title": "early", "ts": "2025-06-11T03:00:00+02:00"})  # 01:00 UTC
    save_session(ws, {"session_id": "a", "summary": "again"})
    appended = indexmd.parse_rows((ws_root / "index.md").read_text(encoding="utf-8"))
    assert len(appended) == 3 and indexmd.latest_by_path(appended)[appended[1].path].summary == "again"
    assert rebuild_index(ws).rows == 2
    rows = indexmd.parse_rows((ws_root / "index.md").read_text(encoding="utf-8"))
    assert [r.title for r in rows] == ["early", "late"] and rows[0].summary == "again"
    assert cli("-w", str(ws_root), "validate", "index.md").returncode == 0


def test_index_cells_escape_pipes() -> None:
    row = indexmd.Row("2025-06-11", "a|b", "x", "line\nbreak | pipe", "sessions/p.md")
    assert indexmd.parse_rows(indexmd.render_index([row])) == [
        indexmd.Row("2025-06-11", "a|b", "x", "line break | pipe", "sessions/p.md")]


def test_a_large_index_md_is_still_read(ws_root: Path, cli: Cli) -> None:
    row = "| 2025-06-11 | t | a | s | sessions/2025-06-11/1432-a1b2c3d.md |\n"
    with open(ws_root / "index.md", "a", encoding="utf-8") as fh:
        fh.write(row * (5 * 1024 * 1024 // len(row) + 1))
    assert cli("-w", str(ws_root), "validate", "index.md").returncode == 0


def test_appends_never_follow_a_symlink_out_of_the_workspace(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("", encoding="utf-8")
    (ws_root / "logs" / "tool-calls.md").unlink()
    (ws_root / "logs" / "tool-calls.md").symlink_to(outside)
    res = cli("-w", str(ws_root), "log", "tool-call", "--session", "s", "--tool", "t")
    assert res.returncode != 0 and "Traceback" not in res.stderr and "tool-calls.md" in res.stderr
    assert outside.read_text(encoding="utf-8") == ""


def test_index_rows_for_sessions_that_no_longer_exist(tmp_path: Path, cli: Cli) -> None:
    from helpers.daemon import session_relpath, session_text, write

    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    kept, gone = session_relpath(1), session_relpath(2)
    for rel in (kept, gone):
        write(root, rel, session_text(rel))
    assert cli("index", "rebuild", ws=root).returncode == 0
    (root / gone).unlink()
    proc = cli("validate", "index.md", ws=root)
    assert proc.returncode == 0  # a warning: index.md can still be committed
    assert f"index.md:4: warning: the row for {gone} names a session that no longer exists" in proc.stdout
    proc = cli("index", "rebuild", ws=root)
    assert proc.returncode == 0 and f"dropped the row for {gone}" in proc.stdout
    text = (root / "index.md").read_text(encoding="utf-8")
    assert kept in text and gone not in text
    assert "no longer exists" not in cli("validate", ws=root).stdout


def test_repair_over_a_workspace_with_a_huge_quoted_integer_repairs_the_rest(ws_root: Path, cli: Cli) -> None:
    huge = put(ws_root, DIRTY.replace("status: closed\n", f"turns: \"{'7' * 5000}\"\nstatus: closed\n"))
    other_rel = REL.replace("1432-a1b2c3d", "1500-b1b2c3d").replace("20250611-1432-a1b2c3d", "20250611-1500-b1b2c3d")
    other = put(ws_root, DIRTY.replace("20250611-1432-a1b2c3d", "20250611-1500-b1b2c3d").replace("14:32", "15:00"),
                other_rel)
    done = cli("repair", ws=ws_root)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "turns has 5000 digits" in done.stdout + done.stderr
    assert "## 结论\n" in huge.read_text(encoding="utf-8") and f"\"{'7' * 5000}\"" in huge.read_text(encoding="utf-8")
    assert other.read_text(encoding="utf-8") == VALID.replace("20250611-1432-a1b2c3d", "20250611-1500-b1b2c3d") \
        .replace("14:32", "15:00")
    assert cli("validate", other_rel, ws=ws_root).returncode == 0
