"""`kbsync run` as a real process on real files and a real git repository."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from helpers.cli import Cli, main_call
from helpers.daemon import (
    DaemonProcess,
    dirty,
    git,
    head_files,
    session_relpath,
    session_text,
    subjects,
    wait_for,
    write,
)
from helpers.hook import provider_secrets
from kbsync.config import Config
from kbsync.core.repair import repair_text
from kbsync.store import fsio

Start = Callable[..., DaemonProcess]


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".kbsync").mkdir(parents=True)
    return ws


@pytest.fixture()
def start(root: Path) -> Iterator[Start]:
    running: list[DaemonProcess] = []

    def launch(*args: str, config: str = "", env: dict[str, str] | None = None) -> DaemonProcess:
        (root / ".kbsync" / "config.toml").write_text(config)
        d = DaemonProcess(root, *args, env=env)
        running.append(d)
        return d

    yield launch
    for d in running:
        d.kill()


def repaired(root: Path, rel: str) -> bool:
    text = (root / rel).read_text(encoding="utf-8")
    return "status： " not in text


def status(root: Path) -> dict[str, Any]:
    proc = main_call("status", "--json", ws=root)
    assert proc.returncode in (0, 1), proc.stderr  # 1: something waits for a person
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_dirty_file_is_repaired(root: Path, start: Start) -> None:
    d = start()
    rel = session_relpath(1)
    write(root, rel, dirty(session_text(rel)))
    wait_for(lambda: repaired(root, rel))
    assert list((root / ".kbsync" / "backup").rglob("*.md")), "the previous bytes are kept"
    assert d.stop() == 0
    assert f"{rel}: repaired" in d.stderr()


def test_locked_file_waits_for_its_lock(root: Path, start: Start) -> None:
    d = start()
    rel = session_relpath(2)
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    assert fsio.try_lock(path, 60)
    write(root, rel, dirty(session_text(rel)))
    wait_for(lambda: rel in status(root)["pending"])  # the daemon holds it (status also sees the lock live)
    report = status(root)
    assert report["running"] and report["pid"] == d.proc.pid and report["skipped"].get(rel) == "locked"
    assert not repaired(root, rel)
    fsio.unlock(path)
    wait_for(lambda: repaired(root, rel))
    d.stop()


def test_file_written_in_small_appends_is_processed_once(root: Path, start: Start) -> None:
    d = start(config="[daemon]\nquiet_ms = 800\n")  # appends 0.1 s apart stay well inside the quiet time
    rel = session_relpath(3)
    text = dirty(session_text(rel, body="段落 " * 200))
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = [text[i:i + len(text) // 20 + 1] for i in range(0, len(text), len(text) // 20 + 1)]
    with open(path, "w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.write(chunk)
            fh.flush()
            time.sleep(0.1)
    wait_for(lambda: repaired(root, rel))
    time.sleep(0.5)
    assert d.stop() == 0
    assert d.stderr().count(f"{rel}: checked") == 1


@pytest.mark.slow
def test_burst_of_2000_files(root: Path, start: Start) -> None:
    d = start()
    rels = [session_relpath(n) for n in range(2000)]
    for n, rel in enumerate(rels):
        text = session_text(rel, status="closed")
        write(root, rel, dirty(text) if n % 10 == 0 else text)
    wait_for(lambda: not set(rels) - head_files(root), timeout=120, step=0.5)
    assert all(repaired(root, rel) for rel in rels[::10])
    assert d.stop() == 0
    assert len(subjects(root)) <= 5


def test_closing_a_session_commits_it(root: Path, start: Start) -> None:
    d = start()
    rel = session_relpath(0x1b2c3d)
    write(root, rel, session_text(rel), age_s=5)
    wait_for(lambda: f"{rel}: checked" in d.stderr())
    write(root, rel, session_text(rel, status="closed"))
    name = rel.split("/")[2]
    sid = f"20250611-{name[:4]}-{name[5:12]}"
    wait_for(lambda: f"session {sid} closed: 合同风险梳理" in subjects(root))
    assert rel in git(root, "show", "--name-only", "--format=", "HEAD")
    d.stop()


def test_session_commit_waits_for_gits_index_lock(root: Path, start: Start) -> None:
    d = start(config="[daemon]\nlock_wait_s = 0.2\n")
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    rel = session_relpath(0x2c3d4e)
    write(root, rel, session_text(rel, status="closed"))
    wait_for(lambda: "commit postponed" in d.stderr())
    assert subjects(root) == []
    lock.unlink()
    wait_for(lambda: any(s.endswith("closed: 合同风险梳理") for s in subjects(root)))
    d.stop()


def test_sigterm_mid_burst_loses_nothing(root: Path, start: Start) -> None:
    d = start()
    rels = [session_relpath(n) for n in range(400)]
    texts = {rel: (dirty(session_text(rel)) if n % 4 == 0 else session_text(rel)) for n, rel in enumerate(rels)}
    for rel, text in texts.items():
        write(root, rel, text)
    time.sleep(0.5)
    began = time.monotonic()
    assert d.stop(signal.SIGTERM) == 0
    assert time.monotonic() - began < 10
    assert subjects(root)[0].startswith("shutdown: ")
    for rel, text in texts.items():
        assert (root / rel).read_text(encoding="utf-8") in (text, repair_text(rel, text, Config()).text)
    committed = head_files(root) & set(rels)
    assert committed, "the final commit holds what was committable"
    for rel in committed:
        assert git(root, "show", f"HEAD:{rel}") == (root / rel).read_text(encoding="utf-8")


def test_restart_processes_what_changed_while_down(root: Path, start: Start) -> None:
    first = start()
    assert first.stop(signal.SIGINT) == 0
    rel = session_relpath(7)
    write(root, rel, dirty(session_text(rel)), age_s=3)
    start()
    wait_for(lambda: repaired(root, rel))


def test_sigkill_mid_repair_leaves_old_or_new_version(root: Path, start: Start) -> None:
    rels = [session_relpath(n) for n in range(300)]
    texts = {rel: dirty(session_text(rel)) for rel in rels}
    d = start()
    for rel, text in texts.items():
        write(root, rel, text)
    wait_for(lambda: any(repaired(root, rel) for rel in rels))
    d.kill()
    for rel, text in texts.items():
        assert (root / rel).read_text(encoding="utf-8") in (text, repair_text(rel, text, Config()).text)
    start()
    wait_for(lambda: all(repaired(root, rel) for rel in rels), timeout=60)


def test_a_file_holding_a_secret_is_skipped_and_reported(root: Path, start: Start) -> None:
    d = start()
    rel = session_relpath(11)
    write(root, rel, dirty(session_text(rel, body=provider_secrets()["github-pat"])))
    wait_for(lambda: status(root)["skipped"].get(rel, "").startswith("secret: "))
    assert not repaired(root, rel), "a file holding a secret is left alone"
    assert d.stop() == 0
    assert rel not in head_files(root)


def test_second_instance_refuses(root: Path, start: Start, cli_process: Cli) -> None:
    d = start()
    second = cli_process("run", ws=root, timeout=30)
    assert second.returncode != 0
    assert f"another `kbsync run` (pid {d.proc.pid})" in second.stderr
    d.stop()


def test_timed_commit_and_sighup_reload(root: Path, start: Start) -> None:
    d = start()
    rel = session_relpath(9)
    write(root, rel, session_text(rel))
    time.sleep(1.5)
    assert subjects(root) == []
    (root / ".kbsync" / "config.toml").write_text('[daemon]\ncommit_every = "1s"\n')
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: any(s.startswith("every 1s: ") for s in subjects(root)))
    assert "configuration reloaded" in d.stderr()
    d.stop()


def test_run_without_a_workspace_uses_home_kb(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KBSYNC_WORKSPACE"}
    env["HOME"] = str(tmp_path)
    kb = tmp_path / "kb"
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "kbsync", "run"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (kb / ".kbsync" / "status.json").exists(), timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert (kb / ".git").is_dir() and (kb / "index.md").is_file()


def test_a_commit_is_synced_at_once_where_a_remote_is_configured(root: Path, start: Start, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    d = start()
    wait_for(lambda: (root / ".git").exists() and "watching" in d.stderr())
    git(root, "remote", "add", "origin", str(bare))
    rel = session_relpath(0x3d4e5f)
    write(root, rel, session_text(rel, status="closed"))

    def pushed() -> bool:
        return "closed: 合同风险梳理" in git(bare, "log", "--format=%s", "main") if (bare / "refs/heads/main").exists() else False

    wait_for(pushed, timeout=30)  # [sync] every is 5 minutes: only the sync after the commit can have sent it
    assert d.stop() == 0
    assert status(root)["last_sync"]["ok"] is True


def _settled(root: Path) -> dict[str, Any]:
    """The daemon's status once it has seen index.md change and has nothing pending."""
    seen: dict[str, Any] = {}

    def done() -> bool:
        seen.update(status(root))
        return (seen.get("last_event") or {}).get("path") == "index.md" and not seen.get("pending")

    time.sleep(0.2)  # the daemon's status is written every 0.5 s at most
    wait_for(done)
    return seen


@pytest.mark.parametrize("line, why", [
    (lambda: f"| 2025-06-12 | 二 | | {provider_secrets()['github-pat']} | sessions/2025-06-12/0900-bbbbbbb-二.md |", "secret: "),
    (lambda: "| 2025-06-12 | 只有三格 | sessions/2025-06-12/0900-ccccccc.md |", "invalid: "),
])
def test_a_line_appended_to_index_md_after_it_was_checked_is_checked_too(root: Path, start: Start, line: Callable[[], str],
                                                                         why: str) -> None:
    # index.md grows by a row with every save; the daemon checks the new rows alone (kbsync.service.appendonly),
    # and a secret or a broken row among them is found as in a check of the whole file.
    start(config="[web]\nenabled = false\n[daemon]\nquiet_ms = 50\n")
    row = "| 2025-06-11 | 一 | 合同 | 摘要 | sessions/2025-06-11/1432-aaaaaaa-一.md |"
    fsio.append_line(root / "index.md", row)
    assert "index.md" not in _settled(root)["skipped"]
    fsio.append_line(root / "index.md", row.replace("一", "再"))
    assert "index.md" not in _settled(root)["skipped"]
    fsio.append_line(root / "index.md", line())
    daemon_said = root / ".kbsync" / "status.json"  # the daemon's own finding (`kbsync status` scans again)
    wait_for(lambda: json.loads(daemon_said.read_text(encoding="utf-8"))["skipped"].get("index.md", "").startswith(why))


def searchable(root: Path, token: str, rel: str) -> bool:
    """Whether a search for `token` finds the file `rel`."""
    proc = main_call("search", token, "--json", ws=root)
    return proc.returncode == 0 and any(hit["path"] == rel for hit in json.loads(proc.stdout))


@pytest.mark.slow
def test_restart_checks_what_plain_writes_and_a_pull_changed_while_down(root: Path, start: Start,
                                                                        tmp_path: Path) -> None:
    rels = [session_relpath(n) for n in range(40)]
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", ".kbsync/\n*.tmp\n*.lock\n", age_s=60)
    for rel in rels:
        write(root, rel, session_text(rel), age_s=60)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "sessions")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(root), str(other))
    first = start()
    wait_for(lambda: json.loads((root / ".kbsync" / "status.json").read_text(encoding="utf-8"))["pending_count"] == 0)
    assert first.stop(signal.SIGINT) == 0
    time.sleep(2.5)  # past the scan mark's slack: what follows is newer than the last run
    plain = {rels[1]: dirty(session_text(rels[1], body="plaintokena")), rels[2]: session_text(rels[2], body="plaintokenb")}
    pulled = {rels[3]: dirty(session_text(rels[3], body="pulltokenc")), rels[4]: session_text(rels[4], body="pulltokend")}
    for rel, text in pulled.items():
        write(other, rel, text)
    git(other, "commit", "-q", "-am", "changed elsewhere")
    git(root, "pull", "-q", "--no-rebase", str(other), "main")
    for rel, text in plain.items():
        write(root, rel, text)
    start()
    for rel, token in zip([*plain, *pulled], ["plaintokena", "plaintokenb", "pulltokenc", "pulltokend"]):
        wait_for(lambda: repaired(root, rel), timeout=30)
        wait_for(lambda: searchable(root, token, rel), timeout=30)
        assert token in (root / rel).read_text(encoding="utf-8")
    assert main_call("validate", *[str(root / rel) for rel in [*plain, *pulled]], ws=root).returncode == 0
