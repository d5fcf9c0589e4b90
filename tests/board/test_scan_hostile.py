"""A scan source holding what is not a regular text file: a FIFO (which would block a reader forever), a
socket, a symlink, a binary file. The scan ends promptly, proposes the rest, and says why each was left out."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from helpers.board import git, git_workspace
from helpers.cli import Cli

NOW = "2025-07-01T09:00:00+08:00"
LIST = "candidates/2025-07-01-notes.md"


def hostile_folder(folder: Path, outside: Path) -> socket.socket:
    folder.mkdir(parents=True)
    (folder / "good.md").write_text("# 好笔记\n\n可以提议。\n", encoding="utf-8")
    os.mkfifo(folder / "pipe.md")
    (folder / "binary.txt").write_bytes(b"# looks like text\n\x00\x01\x02 binary after all\n")
    outside.write_text("# 外面的文件\n\n不该被读到。\n", encoding="utf-8")
    (folder / "link.md").symlink_to(outside)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock.md"))
    return sock


def configure(ws: Path, **source: str) -> None:
    body = "".join(f'{k} = "{v}"\n' for k, v in source.items())
    (ws / ".kbsync").mkdir(parents=True, exist_ok=True)
    (ws / ".kbsync" / "config.toml").write_text(f'[[scan.sources]]\nname = "notes"\n{body}', encoding="utf-8")


@pytest.mark.parametrize("spec", ["folder", "glob"])
def test_a_fifo_socket_symlink_and_binary_file_are_left_out_with_why(tmp_path: Path, cli_process: Cli, spec: str) -> None:
    ws, notes = tmp_path / "ws", tmp_path / "notes"
    ws.mkdir()
    sock = hostile_folder(notes, tmp_path / "outside.md")
    try:
        configure(ws, path=str(notes) if spec == "folder" else f"{notes}/*")
        started = time.monotonic()
        done = cli_process("scan", "--json", "--now", NOW, ws=ws, timeout=30)
        assert time.monotonic() - started < 20
    finally:
        sock.close()
    assert done.returncode == 0, done.stderr
    assert [c["path"] for c in json.loads(done.stdout)] == ["good.md"]
    for name, why in (("pipe.md", "a FIFO (named pipe), not a regular file"), ("link.md", "symlink"),
                      ("sock.md", "a socket"), ("binary.txt", "binary (it holds NUL bytes)")):
        assert f"{name}: left out: unreadable: {why}" in done.stderr or f"{name}: left out: {why}" in done.stderr, name
    listed = (ws / LIST).read_bytes()
    assert b"\x00" not in listed and "外面".encode() not in listed
    again = cli_process("scan", "--json", "--now", NOW, ws=ws, timeout=30)  # still left out, still said
    assert again.returncode == 0 and json.loads(again.stdout) == [] and "pipe.md: left out" in again.stderr


def test_a_binary_file_in_a_git_source_is_left_out_with_why(tmp_path: Path, cli: Cli) -> None:
    ws, repo = tmp_path / "ws", git_workspace(tmp_path / "repo")
    ws.mkdir()
    (repo / "good.md").write_text("# 好\n\n文本。\n", encoding="utf-8")
    (repo / "blob.md").write_bytes(b"\x00\xff binary\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    configure(ws, repo=str(repo), branch="main")
    done = cli("scan", "--json", "--now", NOW, ws=ws)
    assert done.returncode == 0, done.stderr
    assert "good.md" in [c["path"] for c in json.loads(done.stdout)]
    assert "blob.md" not in done.stdout and "blob.md: left out: binary" in done.stderr
