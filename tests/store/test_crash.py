"""Crash safety for real: a child writing, repairing or saving is killed with SIGKILL at random moments.

After every kill the file is a complete old or new version, never a partial one; a
leftover temp file is never taken for content, and the next run recovers on its own.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.core import new_workspace, snapshot
from kbsync.core import indexmd, protocol
from kbsync.core.session import parse_session
from kbsync.store import fsio
from kbsync.store.repairfile import validate_paths
from kbsync.store.workspace import Workspace

ROUNDS = 12  # kills per scenario
MAX_DELAY_S = 0.12  # a kill lands this long at most after the child said it was running
REL = "sessions/2025-06-11/1432-a9993e3-崩溃.md"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")


def version(n: int) -> bytes:
    """Version n of a file: its number first, then ~1 MB that depends on n (a torn write shows)."""
    line = f"{n:08d} " + "内容" * 60 + "\n"
    return f"version {n}\n".encode() + line.encode() * 2500 + f"end {n}\n".encode()


ATOMIC_CHILD = inspect.getsource(version) + textwrap.dedent("""
    import sys
    from pathlib import Path
    from kbsync.store import fsio
    path, n = Path(sys.argv[1]), int(sys.argv[2])
    print("running", flush=True)
    while True:
        n += 1
        fsio.atomic_write(path, version(n))
""")

REPAIR_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from kbsync.store import fsio
    from kbsync.store.repairfile import repair_file
    from kbsync.store.workspace import Workspace
    ws, rel, dirty = Workspace(Path(sys.argv[1])), sys.argv[2], Path(sys.argv[3]).read_bytes()
    print("running", flush=True)
    while True:
        fsio.atomic_write(ws.path(rel), dirty)   # an editor saving a defect
        repair_file(ws, rel)
""")

SAVE_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from kbsync.store.sessions import save_session
    from kbsync.store.workspace import Workspace
    ws, n = Workspace(Path(sys.argv[1])), int(sys.argv[2])
    print("running", flush=True)
    while True:
        n += 1
        save_session(ws, {"session_id": "crash-test", "title": "崩溃", "ts": "2025-06-11T14:32:07+08:00",
                          "summary": f"round {n}", "sections": {"结论": f"round {n}\\n" * 3000}})
""")


def kill_at_random(argv: list[str], rng: random.Random) -> None:
    """Start the child, wait until it runs, let it work a random moment, SIGKILL it."""
    child = subprocess.Popen([sys.executable, "-c", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    ready = child.stdout.readline()
    assert ready == b"running\n", child.communicate()[1].decode()
    time.sleep(rng.uniform(0, MAX_DELAY_S))
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode() if child.stderr else ""
    child.stdout.close()
    if child.stderr:
        child.stderr.close()


def temp_leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob(f"*{fsio.TEMP_SUFFIX}") if ".git" not in p.parts]


def assert_temps_are_not_content(ws: Workspace) -> None:
    """Leftover temp files: no walk, validation or git status takes them for workspace files."""
    leftovers = temp_leftovers(ws.root)
    assert not [rel for rel in ws.iter_files() if rel.endswith(fsio.TEMP_SUFFIX) or "/." in "/" + rel]
    for p in leftovers:
        assert p.name.startswith(".") and not p.name.endswith(".md")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws.root,
                            capture_output=True, text=True, check=True).stdout
    assert fsio.TEMP_SUFFIX not in status and fsio.LOCK_SUFFIX not in status


def wait_out_empty_locks(ws: Workspace) -> None:
    """A kill between creating a lock and writing it leaves it empty: it is stale after a short grace."""
    if any(p.stat().st_size == 0 for p in ws.root.rglob(f"*{fsio.LOCK_SUFFIX}")):
        time.sleep(fsio.EMPTY_LOCK_GRACE_S + 0.1)


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return new_workspace(tmp_path / "ws")


def test_killed_atomic_writes_leave_a_complete_version(ws: Workspace, tmp_path: Path) -> None:
    rng = random.Random(20250611)
    path = ws.path("memory/entities/crash.md")
    fsio.atomic_write(path, version(0))
    seen: set[int] = set()
    n = 0
    for _ in range(ROUNDS):
        kill_at_random([ATOMIC_CHILD, str(path), str(n)], rng)
        data = path.read_bytes()
        n = int(data.split(b"\n", 1)[0].split()[1])
        assert data == version(n), f"torn file after a kill (claims version {n}, {len(data)} bytes)"
        seen.add(n)
        for tmp in temp_leftovers(ws.root):  # a temp may be partial: it must never become the file
            assert tmp.parent == path.parent
        n += 1000  # the next child writes versions that cannot be confused with these
    assert len(seen) > 1, "the children never got to write; the test proved nothing"
    assert_temps_are_not_content(ws)


DIRTY = """---
id: 20250611-1432-a9993e3
ts: 2025-06-11T14:32:07
role: assistant
parent: null
tags: [崩溃]
status： open
summary: "kill -9"
---

## 用户输入

{body}

## 我的判断

## 工具调用

## 结论

## 后续

- 重跑
"""


def test_killed_repairs_leave_old_or_new_and_a_rerun_recovers(ws: Workspace, tmp_path: Path, cli: Cli) -> None:
    rng = random.Random(7)
    dirty = DIRTY.format(body="正文 " * 40000).encode("utf-8")
    dirty_file = tmp_path / "dirty.md"
    dirty_file.write_bytes(dirty)
    fsio.atomic_write(ws.path(REL), dirty)
    cli("repair", REL, ws=ws.root, cwd=ws.root)
    repaired = ws.path(REL).read_bytes()
    assert repaired != dirty and not [f for f in validate_paths(ws, [REL]) if f.level == "error"]
    states = set()
    for _ in range(ROUNDS):
        kill_at_random([REPAIR_CHILD, str(ws.root), REL, str(dirty_file)], rng)
        data = ws.path(REL).read_bytes()
        assert data in (dirty, repaired), f"partial file after a kill ({len(data)} bytes)"
        states.add(data == repaired)
        for backup in ws.backup_dir.rglob("*"):
            if backup.is_file() and not backup.name.endswith(fsio.TEMP_SUFFIX):
                assert backup.read_bytes() == dirty, f"partial backup {backup}"
    assert_temps_are_not_content(ws)
    # whatever the kill left (a stale lock of a dead pid, temps), a plain rerun finishes the job
    wait_out_empty_locks(ws)
    proc = cli("repair", ws=ws.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ws.path(REL).read_bytes() == repaired
    assert not fsio.lock_path(ws.path(REL)).exists()
    before = snapshot(ws.root)
    assert cli("repair", ws=ws.root).returncode == 0
    assert snapshot(ws.root) == before
    assert cli("validate", ws=ws.root).returncode == 0


def test_killed_session_saves_leave_a_whole_session(ws: Workspace, cli: Cli) -> None:
    rng = random.Random(42)
    rel = ""
    n = 0
    for _ in range(ROUNDS):
        kill_at_random([SAVE_CHILD, str(ws.root), str(n)], rng)
        files = [p for p in ws.path(protocol.SESSIONS_DIR).rglob("*.md")]
        if not files:
            continue  # killed before the first file existed
        assert len(files) == 1, f"one session, no conflict copies: {files}"
        rel = files[0].relative_to(ws.root).as_posix()
        doc = parse_session(files[0].read_text(encoding="utf-8"))
        n = int(str(doc.fields["summary"]).split()[1])
        assert doc.section("结论") == (f"round {n}\n" * 3000).strip("\n"), "a torn session"
        rows = indexmd.parse_rows(ws.path(protocol.INDEX_MD).read_text(encoding="utf-8"))
        assert all(r.path == rel for r in rows)
        assert not indexmd.findings(protocol.INDEX_MD, ws.path(protocol.INDEX_MD).read_text(encoding="utf-8"))
        n += 1000
    assert rel, "the children never saved; the test proved nothing"
    assert_temps_are_not_content(ws)
    # the killed writer's lock is stale (its pid is gone): the next save goes through at once
    proc = cli("session", "save", "--json", ws=ws.root, stdin=json.dumps({"session_id": "crash-test", "summary": "after the crashes"}))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["path"] == rel
    assert not fsio.lock_path(ws.path(rel)).exists()
    assert cli("validate", ws=ws.root).returncode == 0
    assert cli("repair", ws=ws.root).returncode == 0


def test_a_half_written_temp_file_is_never_read_as_content(ws: Workspace, cli: Cli) -> None:
    """What a crash between write and rename leaves: the walk, validate and repair ignore it."""
    ws.path(REL).parent.mkdir(parents=True, exist_ok=True)
    torn = b"---\nid: 20250611-1432-a9993e3\nts: 2025-06-"
    temp = fsio.temp_path_for(ws.path(REL))
    temp.write_bytes(torn)
    assert list(ws.iter_files()) == sorted(ws.iter_files()) and not any(".tmp" in r for r in ws.iter_files())
    before = snapshot(ws.root)
    assert cli("validate", ws=ws.root).returncode == 0
    assert cli("repair", ws=ws.root).returncode == 0
    assert snapshot(ws.root) == before
    saved = cli("session", "save", ws=ws.root, stdin=json.dumps(
        {"session_id": "other", "ts": "2025-06-11T14:32:07+08:00"}))
    assert saved.returncode == 0 and temp.read_bytes() == torn


def test_killed_repair_commands_over_a_workspace_leave_whole_files(ws: Workspace, cli: Cli) -> None:
    """`kbsync repair` itself, killed at random moments while it walks many dirty files."""
    rng = random.Random(3)
    dirty: dict[str, bytes] = {}
    for n in range(40):
        hhmm = f"10{n:02d}"
        rel = f"sessions/2025-06-11/{hhmm}-a9993e3-崩溃.md"
        text = DIRTY.format(body=f"正文 {n} " * 3000).replace("-1432-", f"-{hhmm}-").replace("T14:32", f"T10:{n:02d}")
        dirty[rel] = text.encode("utf-8")
        fsio.atomic_write(ws.path(rel), dirty[rel])
    assert len([f for f in validate_paths(ws, None) if f.level == "error"]) >= 40
    killed_after = 0
    for _ in range(6):
        child = subprocess.Popen([sys.executable, "-u", "-m", "kbsync", "-w", str(ws.root), "repair"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert child.stdout is not None
        for _ in range(rng.randrange(1, 5)):  # let it repair a few files (said one by one), then kill it
            killed_after += child.stdout.readline().startswith(b"sessions/")
        time.sleep(rng.uniform(0, 0.02))
        child.kill()
        child.wait(30)
        child.stdout.close()
        for rel, before in dirty.items():
            data = ws.path(rel).read_bytes()
            if data != before:  # repaired: then it is whole and valid
                assert not [f for f in validate_paths(ws, [rel]) if f.level == "error"], rel
    assert killed_after >= 6, "the children were killed before repairing anything; the test proved nothing"
    assert_temps_are_not_content(ws)
    wait_out_empty_locks(ws)
    proc = cli("repair", ws=ws.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert cli("validate", ws=ws.root).returncode == 0
    assert not list(ws.root.rglob(f"*{fsio.LOCK_SUFFIX}"))


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to wait for the git commands a killed sync started")
def test_killed_syncs_leave_a_sound_repository_and_a_rerun_converges(tmp_path: Path, cli: Cli) -> None:
    """`kbsync sync` killed at random moments (while committing, integrating the remote's changes or
    pushing): git's objects and refs stay sound, no line is lost, and the next sync converges.
    KBSYNC_CRASH_SEED picks other moments (it found that conflict copies must come first)."""
    from helpers.sync import all_text, append, git, make_bare, tree_files, workspace

    rng = random.Random(int(os.environ.get("KBSYNC_CRASH_SEED", "11")))
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    for root in (a, b):
        assert cli("sync", ws=root).returncode == 0
    written: list[str] = []
    killed_running = 0
    for n in range(ROUNDS):
        for root, side in ((b, "b"), (a, "a")):  # the remote moves, then this machine has its own changes
            for rel in ("memory/facts.md", "logs/tool-calls.md"):
                append(root, rel, f"- {side} round {n} {rel}")
                written.append(f"- {side} round {n} {rel}")
            for k in range(20):
                line = f"{side} round {n} file {k}"
                (root / "memory" / f"{side}-{n}-{k}.md").write_text(f"# {line}\n\n{line}\n", encoding="utf-8")
                written.append(line)
            if root is b:
                began = time.perf_counter()
                assert cli("sync", ws=b).returncode in (0, 1)
                took = time.perf_counter() - began  # about what a's sync takes on this machine, start-up included
        child = subprocess.Popen([sys.executable, "-m", "kbsync", "-w", str(a), "sync"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.15, 0.85) * took)  # a moment within the sync, on a fast machine as on a slow one
        child.send_signal(signal.SIGKILL)
        killed_running += child.wait(30) == -signal.SIGKILL
        wait_for_git_children(a)  # a git command it started (fetch, push) runs on to its own end
        fsck = subprocess.run(["git", "-C", str(a), "fsck", "--no-dangling", "--no-progress"], capture_output=True,
                              text=True)
        assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stdout + fsck.stderr
        assert git(a, "cat-file", "-t", "HEAD") == "commit"
        here = all_text({p.name: p.read_bytes() for p in a.rglob("*.md") if ".git" not in p.parts})
        assert [line for line in written if line.startswith("a ") and line not in here] == []
    assert killed_running >= ROUNDS // 3, "the syncs finished before the kills; the test proved nothing"
    time.sleep(fsio.EMPTY_LOCK_GRACE_S + 0.1)  # a kill may leave the sync lock behind, empty or held by a dead pid
    for root in (a, b, a):
        done = cli("sync", ws=root)
        assert done.returncode in (0, 1), done.stderr
    head = git(bare, "rev-parse", "main")
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD") == head
    assert git(a, "status", "--porcelain") == ""
    text = all_text(tree_files(bare, "main"))
    assert [line for line in written if line not in text] == []


def wait_for_git_children(root: Path, timeout: float = 30.0) -> None:
    """Wait until no process works in `root`: git commands are in their own process groups (so a
    timeout can stop a whole group), and survive the kbsync that started them."""
    deadline = time.monotonic() + timeout
    while _processes_in(root):
        assert time.monotonic() < deadline, f"still running in {root}: {_processes_in(root)}"
        time.sleep(0.02)


def _processes_in(root: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")).is_relative_to(root):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass  # ended meanwhile, or not ours to read
    return found
