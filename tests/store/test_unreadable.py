"""One file that cannot be read never stops the others: a FIFO, a socket, a dangling symlink or a file
without read permission is left out with its reason, the rest is committed, and `kbsync status` exits 1
naming each until it is fixed, with no daemon running. Real files, real git, the real command line."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.cli import Cli
from helpers.daemon import git, head_files, session_relpath, session_text, write
from kbsync.store import fsio


@pytest.fixture()
def ws(tmp_path: Path, cli: Cli) -> Iterator[Path]:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    yield root


def bad_files(root: Path) -> socket.socket:
    os.mkfifo(root / "memory" / "pipe.md")
    (root / "sessions" / "dangling.md").symlink_to(root / "sessions" / "nowhere.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "artifacts" / "sock"))
    return sock


def test_bad_files_are_left_out_and_named_until_fixed(ws: Path, cli_process: Cli) -> None:
    sock = bad_files(ws)
    good = session_relpath(7)
    write(ws, good, session_text(good, status="closed"), age_s=5)
    try:
        assert cli_process("validate", ws=ws, timeout=30).returncode == 1
        done = cli_process("commit", "--json", ws=ws, timeout=30)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert good in result["committed"] and good in head_files(ws)
        assert result["skipped"]["sessions/dangling.md"].startswith("unreadable: a dangling symlink")
        shown = cli_process("status", "--json", ws=ws, timeout=30)
        assert shown.returncode == 1
        assert json.loads(shown.stdout)["unreadable"] == {
            "artifacts/sock": "unreadable: a socket, not a regular file",
            "memory/pipe.md": "unreadable: a FIFO (named pipe), not a regular file",
            "sessions/dangling.md": "unreadable: a dangling symlink (its target does not exist)"}
        text = cli_process("status", ws=ws).stdout
        assert text.count(": unreadable: ") == 3 and "  memory/pipe.md: unreadable: a FIFO" in text
    finally:
        sock.close()
    for rel in ("memory/pipe.md", "sessions/dangling.md", "artifacts/sock"):
        (ws / rel).unlink()
    assert cli_process("status", ws=ws).returncode == 0


def test_validate_names_a_fifo_and_never_opens_it(ws: Path, cli_process: Cli) -> None:
    os.mkfifo(ws / "memory" / "pipe.md")
    started = time.monotonic()
    done = cli_process("validate", "memory/pipe.md", ws=ws, timeout=30)
    assert time.monotonic() - started < 20
    assert done.returncode == 1
    assert "memory/pipe.md:1: error: unreadable: a FIFO (named pipe), not a regular file" in done.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file whatever its permissions")
def test_a_file_without_read_permission_is_left_out(ws: Path, cli: Cli) -> None:
    secret = ws / "memory" / "locked.md"
    secret.write_text("- fact\n")
    secret.chmod(0)
    good = session_relpath(8)
    write(ws, good, session_text(good, status="closed"), age_s=5)
    result = json.loads(cli("commit", "--json", ws=ws).stdout)
    assert good in result["committed"] and result["skipped"]["memory/locked.md"] == "unreadable: permission denied"
    assert cli("status", ws=ws).returncode == 1


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "file").write_bytes(b"data")
    assert fsio.read_regular(tmp_path / "file")[0] == b"data"
    for name, why in (("fifo", "a FIFO"), ("link", "a symlink")):
        with pytest.raises(fsio.UnreadableError, match=why):
            fsio.read_regular(tmp_path / name)
    with pytest.raises(FileNotFoundError):
        fsio.read_regular(tmp_path / "gone")
