"""Reading and rewriting LEARNING_BOARD.md on disk, under its lock, with a backup of the old bytes."""

from __future__ import annotations

from typing import Callable

from kbsync import fsio
from kbsync.board import Board, parse_board
from kbsync.protocol import BOARD_MD
from kbsync.workspace import Workspace, decode


def read_board(ws: Workspace) -> str:
    """The board's text, or "" when the workspace has none yet."""
    path = ws.path(BOARD_MD)
    return ws.read_text(BOARD_MD) if path.exists() else ""


def load_board(ws: Workspace) -> Board:
    return parse_board(read_board(ws))


def edit_board(ws: Workspace, edit: Callable[[str], str]) -> tuple[str, str]:
    """Apply `edit` to the board's text and write the result; (old text, new text).

    Holds the board's lock from the read to the write, re-checks the fingerprint,
    keeps the previous bytes under .kbsync/backup/, writes atomically. Nothing is
    written when `edit` returns the text unchanged.
    """
    path = ws.path(BOARD_MD)
    daemon = ws.config.daemon
    with fsio.locked(path, ttl_s=daemon.lock_ttl_s, wait_s=daemon.lock_wait_s):
        if not path.exists():
            new = edit("")
            if new:
                fsio.atomic_write(path, new.encode("utf-8"))
            return "", new
        data, fp = fsio.read_with_fingerprint(path)
        old = decode(data, BOARD_MD)
        new = edit(old)
        if new != old:
            fsio.guarded_replace(
                path, new.encode("utf-8"), fp,
                backup_to=lambda b: fsio.backup(ws.backup_dir, BOARD_MD, b),
                check=lambda b: _keys(b.decode("utf-8", "replace")) == _keys(new),
                hold_lock=False,
            )
        return old, new


def _keys(text: str) -> list[str]:
    return [b.entry.key for b in parse_board(text).entries()]
