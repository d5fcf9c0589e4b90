"""validate and repair over the worker pool: the same output as one process, and repairs that survive a kill."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.corpus import gen_workspace
from kbsync.core import sessionfast
from kbsync.core.validate import check_session, check_session_fully
from kbsync.store.workspace import Workspace


@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated workspace of 600 sessions, a fifth of them with a defect (more files than the pool's floor)."""
    return gen_workspace(tmp_path_factory.mktemp("pool") / "ws", 600, dirty=0.2, seed=5)


def files(root: Path) -> dict[str, bytes]:
    """Every Markdown file but kbsync's state and the logs (whose lines carry the time they were written)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if not {".kbsync", "logs"} & set(p.relative_to(root).parts)}


@pytest.mark.parametrize("args", [("validate",), ("validate", "--json"), ("repair", "--dry-run"),
                                  ("repair", "--dry-run", "--json")])
def test_the_pool_prints_what_one_process_prints(dirty: Path, cli: Cli, args: tuple[str, ...]) -> None:
    one = cli(*args, ws=dirty, env={"KBSYNC_WORKERS": "1"})
    two = cli(*args, ws=dirty, env={"KBSYNC_WORKERS": "2"})
    assert one.stdout.count("\n") > 100  # the defects are there to be reported
    assert (two.returncode, two.stdout) == (one.returncode, one.stdout)


@pytest.mark.slow
def test_repair_over_the_pool_writes_what_one_process_writes(dirty: Path, tmp_path: Path, cli: Cli) -> None:
    serial, pooled = tmp_path / "one", tmp_path / "two"
    shutil.copytree(dirty, serial)
    shutil.copytree(dirty, pooled)
    one = cli("repair", ws=serial, env={"KBSYNC_WORKERS": "1"})
    two = cli("repair", ws=pooled, env={"KBSYNC_WORKERS": "2"})
    assert (two.returncode, two.stdout) == (one.returncode, one.stdout)
    assert "repaired" in two.stdout and files(pooled) == files(serial)


def test_a_repair_killed_midway_loses_nothing(dirty: Path, tmp_path: Path, cli: Cli) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    shutil.copytree(dirty, whole)
    shutil.copytree(dirty, cut)
    before = files(cut)
    assert cli("repair", ws=whole).returncode in (0, 1)
    argv = [sys.executable, "-m", "kbsync", "-w", str(cut), "repair"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "KBSYNC_WORKERS": "2"})
    assert proc.stdout is not None
    for _ in range(10):  # ten files repaired: the workers are busy with the rest
        assert "repaired" in proc.stdout.readline()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    after = files(cut)
    assert after.keys() == before.keys()
    changed = [rel for rel in after if after[rel] != before[rel]]
    backups = {p.read_bytes() for p in (cut / ".kbsync" / "backup").rglob("*.md")}
    assert len(changed) >= 10 and all(before[rel] in backups for rel in changed)
    assert all(after[rel] == files(whole)[rel] for rel in changed)  # each one wholly repaired
    assert cli("repair", ws=cut).returncode in (0, 1)
    assert files(cut) == files(whole)  # once run again, as if never stopped


def test_the_fast_path_finds_what_the_full_check_finds(dirty: Path) -> None:
    ws = Workspace(dirty)
    limit = ws.config.protocol.max_session_kb * 1024
    taken = 0
    for rel in ws.iter_files("sessions"):
        text = ws.read_text(rel).replace("\r\n", "\n")
        taken += sessionfast.is_clean(rel, text, limit)
        assert check_session(rel, text, ws.config) == check_session_fully(rel, text, ws.config), rel
    assert taken > 400  # of 600 sessions, about 480 without a defect: nearly all of them proven clean at once
