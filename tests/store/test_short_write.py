"""Short writes: an append to index.md or a log that the disk (here a file-size limit, RLIMIT_FSIZE, set in
the child process only) lets through in part is undone and reported, never left as half a line."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from helpers.core import new_workspace
from kbsync.core import protocol

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE")


def limited(limit: int) -> Callable[[], None]:
    """A child's files may not grow past `limit` bytes (a write crossing it stops at it, the next fails)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def kbsync(root: Path, *args: str, limit: int | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    return subprocess.run([sys.executable, "-m", "kbsync", "-w", str(root), *args], input=stdin, text=True,
                          capture_output=True, env=env, timeout=120,
                          preexec_fn=limited(limit) if limit is not None else None)


def failed_whole(done: subprocess.CompletedProcess[str], rel: str) -> None:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and rel in lines[0] and "could not be written whole" in lines[0], lines
    assert "nothing was added" in lines[0]


def test_append_line_cut_by_a_file_size_limit_is_undone(tmp_path: Path) -> None:
    path = tmp_path / "log.md"
    path.write_bytes(b"# log\n" + b"x" * 1000)  # no final newline: the append supplies one, and must take it back
    before = path.read_bytes()
    child = ("import sys\nfrom pathlib import Path\nfrom kbsync.store import fsio\nfrom kbsync.errors import "
             "KbsyncError\ntry:\n    fsio.append_line(Path(sys.argv[1]), 'y' * 500)\nexcept KbsyncError as e:\n"
             "    print(e)\n    sys.exit(1)\n")
    done = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True, timeout=60,
                          preexec_fn=limited(len(before) + 100))
    assert done.returncode == 1 and "could not be written whole" in done.stdout, (done.stdout, done.stderr)
    assert path.read_bytes() == before


def test_a_tool_call_line_that_does_not_fit_is_undone_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    log = root / protocol.TOOL_CALLS_LOG
    assert kbsync(root, "log", "tool-call", "--session", "s1", "--tool", "grep").returncode == 0
    before = log.read_bytes()
    done = kbsync(root, "log", "tool-call", "--session", "s1", "--tool", "grep", "--detail", "d" * 400,
                  limit=len(before) + 60)
    failed_whole(done, protocol.TOOL_CALLS_LOG)
    assert log.read_bytes() == before
    assert kbsync(root, "log", "error", "first").returncode == 0
    errors = root / protocol.ERRORS_LOG
    kept = errors.read_bytes()
    failed_whole(kbsync(root, "log", "error", "e" * 400, limit=len(kept) + 60), protocol.ERRORS_LOG)
    assert errors.read_bytes() == kept
    assert kbsync(root, "log", "tool-call", "--session", "s1", "--tool", "ls").returncode == 0
    assert log.read_bytes().startswith(before) and log.read_bytes().count(b"\n") == before.count(b"\n") + 1
    assert kbsync(root, "validate").returncode == 0


def test_an_index_row_that_does_not_fit_is_undone_and_the_save_fails(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    for n in range(12):  # an index.md larger than one session's file, so the limit stops only the row
        payload = {"session_id": f"s{n}", "title": f"会话 {n}", "summary": "x"}
        assert kbsync(root, "session", "save", stdin=json.dumps(payload)).returncode == 0
    index = root / protocol.INDEX_MD
    before = index.read_bytes()
    done = kbsync(root, "session", "save", stdin=json.dumps({"session_id": "late", "title": "迟到的会话"}),
                  limit=len(before) + 40)
    failed_whole(done, protocol.INDEX_MD)
    assert index.read_bytes() == before
    assert kbsync(root, "validate").returncode == 0, "index.md stays valid"
    again = kbsync(root, "session", "save", stdin=json.dumps({"session_id": "late", "title": "迟到的会话"}))
    assert again.returncode == 0, again.stderr
    assert index.read_bytes().startswith(before) and "迟到的会话" in index.read_text(encoding="utf-8")
