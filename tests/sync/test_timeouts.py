"""A remote that accepts connections and never answers cannot stall `kbsync sync`: git's fetch (git mode)
and every HTTP request (API mode) end at `[sync] timeout_s`, with exit 3 and no program left behind."""

from __future__ import annotations

import time
from pathlib import Path

from helpers.cli import Cli
from helpers.daemon import git
from helpers.silent import SilentServer, processes_in


def workspace(tmp_path: Path, cli: Cli, config: str) -> Path:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    (root / ".kbsync" / "config.toml").write_text(config, encoding="utf-8")
    return root


def test_a_silent_git_remote_is_given_up_at_the_timeout(tmp_path: Path, cli_process: Cli) -> None:
    root = workspace(tmp_path, cli_process, "[sync]\ntimeout_s = 1.0\nmax_retries = 0\n")
    with SilentServer() as remote:
        git(root, "remote", "add", "origin", f"git://127.0.0.1:{remote.port}/kb.git")
        started = time.monotonic()
        done = cli_process("sync", ws=root, timeout=60)
        took = time.monotonic() - started
        assert remote.connections >= 1
        assert processes_in(root) == []
    assert done.returncode == 3, done.stderr
    assert "timed out after 1 s" in done.stderr and took < 15


def test_a_silent_github_api_is_given_up_at_the_timeout(tmp_path: Path, cli_process: Cli) -> None:
    with SilentServer() as api:
        root = workspace(tmp_path, cli_process, f'[sync]\nmode = "github-api"\ntimeout_s = 1.0\nmax_retries = 1\n'
                                        f'[github]\napi_url = "http://127.0.0.1:{api.port}"\nrepository = "o/kb"\n')
        started = time.monotonic()
        done = cli_process("sync", ws=root, env={"GITHUB_TOKEN": "t" * 8}, timeout=60)
        took = time.monotonic() - started
        assert api.connections >= 2  # the request and its one retry
    assert done.returncode == 3, done.stderr
    assert "kept failing after 2 tries" in done.stderr and took < 15
