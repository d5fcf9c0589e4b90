"""The real daemon says in its log each sync it runs and each conflict copy it makes, so a person reading
`journalctl --user -u kbsync` learns of a conflict without looking for files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.daemon import DaemonProcess, wait_for
from helpers.sync import append, git, make_bare, open_ws, tree_files, workspace

pytestmark = pytest.mark.slow



def test_the_daemon_logs_each_sync_and_each_conflict_it_creates(tmp_path: Path) -> None:
    from kbsync.sync.syncer import sync

    bare = make_bare(tmp_path / "remote.git")
    other = workspace(tmp_path, "other", bare)
    mine = workspace(tmp_path, "mine", bare, extra_config='commit_every = "1s"\n[sync]\nevery = "2s"\n')
    assert sync(open_ws(other)).exit_code == 0
    assert sync(open_ws(mine)).exit_code == 0
    append(other, "artifacts/notes.md", "- the other machine's line")
    assert sync(open_ws(other)).exit_code == 0
    d = DaemonProcess(mine)
    try:
        append(mine, "artifacts/notes.md", "- this machine's line")

        def copy_pushed() -> bool:
            return any(p.startswith("artifacts/notes.conflict-") for p in tree_files(bare, "main"))

        wait_for(copy_pushed, timeout=60)
        wait_for(lambda: re.search(r"sync git:\S+ .*\(\d+ rounds?, \d+ requests?\)", d.stderr()) is not None)
    finally:
        assert d.stop() == 0
    log = d.stderr()
    copy = next(p for p in tree_files(bare, "main") if p.startswith("artifacts/notes.conflict-"))
    assert f"conflict: {copy} saved (this machine's version) for a person to settle" in log
    assert "- this machine's line" in (mine / copy).read_text(encoding="utf-8")
    assert "- the other machine's line" in (mine / "artifacts/notes.md").read_text(encoding="utf-8")
    assert git(mine, "status", "--porcelain") == ""
