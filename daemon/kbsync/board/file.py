"""Reading and rewriting LEARNING_BOARD.md on disk."""

from __future__ import annotations

from typing import Callable

from kbsync.core.board import Board, Entry, parse_board, upsert
from kbsync.core.protocol import BOARD_MD
from kbsync.store.guardededit import edit_file
from kbsync.store.workspace import Workspace


def read_board(ws: Workspace) -> str:
    """The board's text, or "" when the workspace has none yet."""
    return ws.read_text(BOARD_MD) if ws.path(BOARD_MD).exists() else ""


def load_board(ws: Workspace) -> Board:
    return parse_board(read_board(ws))


def edit_board(ws: Workspace, edit: Callable[[str], str]) -> tuple[str, str]:
    """Apply `edit` to the board under its lock, with a backup (see guardededit.edit_file)."""
    return edit_file(ws, BOARD_MD, edit)


def upsert_entry(ws: Workspace, entry: Entry) -> str:
    """Add or update `entry` (by its key) on the board; what was done ("added", "updated", "unchanged")."""
    action = ""

    def edit(text: str) -> str:
        nonlocal action
        new, action = upsert(text, entry)
        return new

    edit_board(ws, edit)
    return action
