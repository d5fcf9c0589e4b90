"""The real daemon never follows a symlink in the workspace: it leaves each out with its reason (in `status`
and in the commit message), repairs and commits the real files, and never turns a link into a file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.cli import main_call
from helpers.core import new_workspace
from helpers.daemon import DaemonProcess, dirty, head_files, session_relpath, session_text, wait_for, write

LINK = session_relpath(1, "link")
ALIAS = session_relpath(2, "alias")
DIRTY = session_relpath(3, "dirty")


def skipped(root: Path) -> dict[str, str]:
    done = main_call("status", "--json", ws=root)
    found: dict[str, str] = json.loads(done.stdout).get("skipped", {})
    return found


def test_the_daemon_leaves_links_out_and_commits_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    (root / ".kbsync" / "config.toml").write_text("[daemon]\nquiet_ms = 100\n", encoding="utf-8")
    config = (root / ".git" / "config").read_bytes()
    write(root, DIRTY, dirty(session_text(DIRTY, status="closed")), age_s=5)
    (root / LINK).symlink_to("../../.git/config")
    (root / ALIAS).symlink_to(Path(DIRTY).name)
    daemon = DaemonProcess(root)
    try:
        wait_for(lambda: all(skipped(root).get(rel, "").startswith("symlink") for rel in (LINK, ALIAS)))
        wait_for(lambda: DIRTY in head_files(root))
    finally:
        assert daemon.stop() == 0
    assert (root / LINK).is_symlink() and (root / ALIAS).is_symlink()
    assert (root / ".git" / "config").read_bytes() == config
    assert LINK not in head_files(root) and ALIAS not in head_files(root)
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%B"], capture_output=True, text=True).stdout
    assert f"- {LINK}: symlink" in log
    assert "left out: symlink" in daemon.stderr() and "Traceback" not in daemon.stderr()
