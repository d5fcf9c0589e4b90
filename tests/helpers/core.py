"""Shared helpers for the core's tests: the kbsync CLI as a real subprocess, workspaces, snapshots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from helpers.cli import main_call
from kbsync.app.workspace import init_workspace
from kbsync.config import Config
from kbsync.store.workspace import Workspace


def new_workspace(root: Path, config: Config | None = None) -> Workspace:
    """An initialised workspace (layout and git repository) at `root`."""
    init_workspace(root)
    return Workspace(root, config or Config())


def save(ws: Path, payload: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    """`kbsync session save` with `payload` as JSON on standard input."""
    return main_call("session", "save", *extra, ws=ws, stdin=json.dumps(payload, ensure_ascii=False))


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` (outside .git) with its bytes and mtime_ns."""
    out: dict[str, tuple[bytes, int]] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not p.is_symlink() and not rel.startswith(".git/"):
            out[rel] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out


def one_line_error(proc: subprocess.CompletedProcess[str], name: str) -> None:
    """A user error: non-zero exit, no traceback, one line on stderr naming `name`."""
    assert proc.returncode != 0, proc
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert name in lines[0], proc.stderr
