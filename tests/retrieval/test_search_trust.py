"""A search source that runs a program is honoured only from a config file a person on this machine controls:
`--config` outside the workspace, or an untracked `.kbsync/config.toml`. Never from a tracked file, from the
workspace's content, or through a link into it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.cli import Cli
from helpers.core import new_workspace

MARKER = "ran-a-command"


def command_source(marker: Path) -> str:
    return (f'[[search.sources]]\nname = "tool"\nkind = "command"\n'
            f'command = ["sh", "-c", "touch {marker}; echo \'{{\\"title\\": \\"t\\", \\"key\\": \\"k\\"}}\'"]\n')


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "runs a program" in lines[0] and says in lines[0], done.stderr


def test_an_untracked_workspace_config_and_an_outside_config_may_run_programs(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(command_source(marker), encoding="utf-8")
    done = cli("-w", str(root), "search", "合同")
    assert done.returncode == 0 and marker.exists(), done.stderr
    marker.unlink()
    outside = tmp_path / "mine.toml"
    outside.write_text(command_source(marker), encoding="utf-8")
    done = cli("-w", str(root), "--config", str(outside), "search", "合同")
    assert done.returncode == 0 and marker.exists(), done.stderr


def test_a_tracked_workspace_config_runs_nothing(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(command_source(marker), encoding="utf-8")
    git(root, "add", "-f", ".kbsync/config.toml")
    git(root, "commit", "-q", "-m", "config")
    refused(cli("-w", str(root), "search", "合同"), ".kbsync/config.toml is tracked by git")
    assert not marker.exists()


def test_a_config_in_the_workspace_content_or_linked_from_it_runs_nothing(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    synced = root / "memory" / "tools.toml"
    synced.write_text(command_source(marker), encoding="utf-8")
    refused(cli("-w", str(root), "--config", str(synced), "search", "合同"), "memory/tools.toml")
    (root / ".kbsync" / "config.toml").symlink_to(synced)
    refused(cli("-w", str(root), "search", "合同"), "memory/tools.toml")
    assert not marker.exists()
