"""Browser sessions kept in .kbsync/: they last their time, end with a rotation of the API token or a log-out,
and the folder holds only hashes of their ids."""

from __future__ import annotations

from pathlib import Path

from kbsync.app import websessions as w
from kbsync.app.workspace import init_workspace, open_workspace

DAY = 86400.0


def test_a_session_lasts_its_time_and_no_longer(tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws")
    ws = open_workspace(tmp_path / "ws", None)
    sid, made = w.open_session(ws, "a" * 64, 30 * DAY, now=1000.0)
    assert w.find_session(ws, sid, "a" * 64, now=1000.0 + 30 * DAY - 1) == made
    assert w.find_session(ws, sid, "a" * 64, now=1000.0 + 30 * DAY + 1) is None
    assert not list((ws.state_dir / w.SESSIONS_DIR).iterdir())  # the expired one's file is gone


def test_rotating_the_token_or_logging_out_ends_it(tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws")
    ws = open_workspace(tmp_path / "ws", None)
    sid, _ = w.open_session(ws, "a" * 64, DAY, now=0.0)
    assert w.find_session(ws, sid, "b" * 64, now=1.0) is None
    sid, _ = w.open_session(ws, "a" * 64, DAY, now=0.0)
    files = list((ws.state_dir / w.SESSIONS_DIR).iterdir())
    assert [p.name for p in files] == [w.digest(sid)] and sid not in files[0].read_text()
    w.close_session(ws, sid)
    assert w.find_session(ws, sid, "a" * 64, now=1.0) is None


def test_a_crafted_cookie_reaches_no_file(tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws")
    ws = open_workspace(tmp_path / "ws", None)
    for bad in ("../web-token", "", "x" * 64, "A" * 64):
        assert w.find_session(ws, bad, "a" * 64) is None
        w.close_session(ws, bad)
