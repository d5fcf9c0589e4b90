"""kbsync.fsio on a real filesystem: atomic writes, locks, guarded replace, appends."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from kbsync.errors import ConflictError, LockedError
from kbsync.store import fsio


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# ---- atomic_write -----------------------------------------------------------

def test_atomic_write_replaces_from_a_temp_in_the_same_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    sources: list[Path] = []
    real_replace = os.replace

    def spy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        sources.append(Path(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    fsio.atomic_write(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert [s.parent for s in sources] == [tmp_path]
    assert sources[0].name.endswith(fsio.TEMP_SUFFIX) and sources[0].name.startswith(".a.md.")
    assert _names(tmp_path) == {"a.md"}


def test_atomic_write_creates_parents_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "x" / "y" / "f.md"
    fsio.atomic_write(target, b"one")
    assert target.read_bytes() == b"one"
    target.chmod(0o600)
    fsio.atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert target.stat().st_mode & 0o777 == 0o600
    assert _names(target.parent) == {"f.md"}


def test_atomic_write_failure_leaves_old_content_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "d.md"
    target.mkdir()  # os.replace of a file onto a non-empty folder fails
    (target / "inside").write_bytes(b"keep")
    with pytest.raises(OSError):
        fsio.atomic_write(target, b"new")
    assert _names(tmp_path) == {"d.md"}
    assert (target / "inside").read_bytes() == b"keep"


def test_atomic_write_all_writes_every_file_and_fsyncs_each_folder_once(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    files = {tmp_path / f"d{i % 3}" / f"f{i}.md": f"content {i}\n".encode() for i in range(20)}
    (tmp_path / "d0").mkdir()
    (tmp_path / "d0" / "f0.md").write_bytes(b"old")
    (tmp_path / "d0" / "f0.md").chmod(0o600)
    synced_folders: list[Path] = []
    real = fsio.fsync_dir
    monkeypatch.setattr(fsio, "fsync_dir", lambda folder: (synced_folders.append(folder), real(folder))[1])
    fsio.atomic_write_all(files)
    assert all(path.read_bytes() == data for path, data in files.items())
    assert (tmp_path / "d0" / "f0.md").stat().st_mode & 0o777 == 0o600
    assert sorted(synced_folders) == [tmp_path / f"d{i}" for i in range(3)]
    assert all(not p.name.endswith(fsio.TEMP_SUFFIX) for p in tmp_path.rglob("*"))


def test_atomic_write_all_failing_on_one_file_leaves_no_temp_and_no_half_file(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.md", tmp_path / "b.md"
    good.write_bytes(b"old a")
    bad.mkdir()
    (bad / "inside").write_bytes(b"keep")
    with pytest.raises(OSError):
        fsio.atomic_write_all({good: b"new a", bad: b"new b"}, mode=0o444)
    assert good.read_bytes() in (b"old a", b"new a")
    assert _names(tmp_path) == {"a.md", "b.md"}


def test_atomic_write_exception_while_writing_removes_the_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        fsio.atomic_write(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert _names(tmp_path) == {"a.md"}


# ---- locks ----------------------------------------------------------------------

def _write_lock(path: Path, *, pid: int, host: str, expire: float) -> Path:
    lock = fsio.lock_path(path)
    lock.write_text(json.dumps({"pid": pid, "host": host, "expire": expire}), encoding="utf-8")
    return lock


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_try_lock_is_exclusive_and_records_pid_host_expire(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    assert fsio.try_lock(f, 30)
    info = json.loads(fsio.lock_path(f).read_text(encoding="utf-8"))
    assert info["pid"] == os.getpid()
    assert info["host"] == socket.gethostname()
    assert time.time() < info["expire"] <= time.time() + 32
    assert fsio.lock_held(f)
    assert not fsio.try_lock(f, 30)  # O_EXCL: the second taker fails
    fsio.unlock(f)
    assert not fsio.lock_path(f).exists()
    assert fsio.try_lock(f, 30)


def test_locked_waits_a_bounded_time_then_raises(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    _write_lock(f, pid=os.getpid(), host=socket.gethostname(), expire=time.time() + 600)
    start = time.monotonic()
    with pytest.raises(LockedError) as err:
        with fsio.locked(f, wait_s=0.3):
            pytest.fail("entered a locked block")
    assert time.monotonic() - start < 10
    assert "s.md.lock" in str(err.value) and str(f) in str(err.value)
    assert fsio.lock_path(f).exists()  # the other writer's lock is untouched


def test_locked_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from kbsync.store import fsio\n"
        f"p = Path({str(f)!r}); assert fsio.try_lock(p, 60); print('held', flush=True)\n"
        "time.sleep(0.5); fsio.unlock(p)")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with fsio.locked(f, wait_s=20):
        assert json.loads(fsio.lock_path(f).read_text())["pid"] == os.getpid()
    assert holder.wait(20) == 0
    assert not fsio.lock_path(f).exists()


def test_locked_releases_on_exception(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    with pytest.raises(RuntimeError):
        with fsio.locked(f):
            raise RuntimeError("boom")
    assert not fsio.lock_path(f).exists()


def test_lock_with_expired_time_is_stale_and_cleared(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    _write_lock(f, pid=os.getpid(), host=socket.gethostname(), expire=time.time() - 1)
    assert not fsio.lock_held(f)
    assert fsio.clear_stale_lock(f)
    assert not fsio.lock_path(f).exists()


def test_lock_of_a_dead_pid_on_this_host_is_stale(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    _write_lock(f, pid=_dead_pid(), host=socket.gethostname(), expire=time.time() + 600)
    assert not fsio.lock_held(f)
    with fsio.locked(f, wait_s=0.5):  # taken over without waiting for the expiry
        assert json.loads(fsio.lock_path(f).read_text())["pid"] == os.getpid()


def test_fresh_locks_are_respected(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    lock = _write_lock(f, pid=os.getpid(), host=socket.gethostname(), expire=time.time() + 600)
    assert fsio.lock_held(f) and not fsio.clear_stale_lock(f)
    # another machine's lock: its pid cannot be checked here, only its expiry counts
    _write_lock(f, pid=_dead_pid(), host="another-host.invalid", expire=time.time() + 600)
    assert fsio.lock_held(f) and not fsio.clear_stale_lock(f) and not fsio.try_lock(f, 30)
    assert lock.exists()


def test_unreadable_lock_is_stale_only_when_old(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    lock = fsio.lock_path(f)
    lock.write_text("{half-writ", encoding="utf-8")
    assert fsio.lock_held(f)
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert not fsio.lock_held(f)
    assert fsio.try_lock(f, 30)


def test_an_empty_lock_left_by_a_crash_is_stale_after_a_short_grace(tmp_path: Path) -> None:
    """A taker killed between creating the lock and writing it leaves it empty."""
    f = tmp_path / "s.md"
    lock = fsio.lock_path(f)
    lock.touch()
    assert fsio.lock_held(f), "a lock being written right now is respected"
    start = time.monotonic()
    with fsio.locked(f, wait_s=30):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert time.monotonic() - start < 25, "taken over after the grace, not after a minute"


# ---- guarded_replace --------------------------------------------------------------

def _backup_into(root: Path, rel: str) -> tuple[list[bytes], Callable[[bytes], Path]]:
    kept: list[bytes] = []

    def keep(old: bytes) -> Path:
        kept.append(old)
        return fsio.backup(root / ".kbsync" / "backup", rel, old)

    return kept, keep


def test_guarded_replace_writes_backs_up_and_unlocks(tmp_path: Path) -> None:
    f = tmp_path / "sessions" / "a.md"
    f.parent.mkdir()
    f.write_bytes(b"old bytes")
    _, fp = fsio.read_with_fingerprint(f)
    kept, keep = _backup_into(tmp_path, "sessions/a.md")
    fsio.guarded_replace(f, b"new bytes", fp, backup_to=keep, check=lambda b: True)
    assert f.read_bytes() == b"new bytes"
    assert kept == [b"old bytes"]
    backups = list((tmp_path / ".kbsync" / "backup").glob("*/sessions/a.md"))
    assert [b.read_bytes() for b in backups] == [b"old bytes"]
    assert not fsio.lock_path(f).exists()
    assert _names(f.parent) == {"a.md"}


def test_guarded_replace_refuses_a_changed_file(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_bytes(b"as read")
    _, fp = fsio.read_with_fingerprint(f)
    f.write_bytes(b"someone else's edit")
    kept, keep = _backup_into(tmp_path, "a.md")
    with pytest.raises(ConflictError):
        fsio.guarded_replace(f, b"mine", fp, backup_to=keep, check=lambda b: True)
    assert f.read_bytes() == b"someone else's edit"
    assert kept == [] and not (tmp_path / ".kbsync").exists()
    assert not fsio.lock_path(f).exists()


def test_guarded_replace_detects_same_size_rewrite_with_same_mtime(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_bytes(b"aaaa")
    st = f.stat()
    _, fp = fsio.read_with_fingerprint(f)
    f.write_bytes(b"bbbb")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ConflictError):
        fsio.guarded_replace(f, b"mine", fp, backup_to=lambda old: None, check=lambda b: True)
    assert f.read_bytes() == b"bbbb"


def test_guarded_replace_restores_previous_bytes_when_the_check_fails(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_bytes(b"good old")
    _, fp = fsio.read_with_fingerprint(f)
    kept, keep = _backup_into(tmp_path, "a.md")
    seen: list[bytes] = []

    def check(written: bytes) -> bool:
        seen.append(written)
        return False

    with pytest.raises(ConflictError):
        fsio.guarded_replace(f, b"broken new", fp, backup_to=keep, check=check)
    assert seen == [b"broken new"]  # the check saw what was on disk
    assert f.read_bytes() == b"good old"
    assert [b.read_bytes() for b in (tmp_path / ".kbsync" / "backup").glob("*/a.md")] == [b"good old"]
    assert not fsio.lock_path(f).exists()
    assert _names(tmp_path) == {"a.md", ".kbsync"}


def test_guarded_replace_skips_a_locked_file(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_bytes(b"old")
    _, fp = fsio.read_with_fingerprint(f)
    _write_lock(f, pid=os.getpid(), host=socket.gethostname(), expire=time.time() + 600)
    with pytest.raises(LockedError):
        fsio.guarded_replace(f, b"new", fp, backup_to=lambda old: None, check=lambda b: True)
    assert f.read_bytes() == b"old"
    assert fsio.lock_path(f).exists()  # not ours to remove


def test_backups_of_the_same_second_do_not_overwrite_each_other(tmp_path: Path) -> None:
    first = fsio.backup(tmp_path, "sessions/a.md", b"one", now=1_700_000_000)
    second = fsio.backup(tmp_path, "sessions/a.md", b"two", now=1_700_000_000)
    assert first != second
    assert first.read_bytes() == b"one" and second.read_bytes() == b"two"
    assert first.relative_to(tmp_path).as_posix() == "20231114T221320Z/sessions/a.md"


# ---- append_line ------------------------------------------------------------------

def test_append_line_supplies_a_missing_final_newline(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "errors.md"
    fsio.append_line(log, "first")
    assert log.read_bytes() == b"first\n"
    with open(log, "ab") as fh:
        fh.write(b"no newline")
    fsio.append_line(log, "second")
    assert log.read_bytes() == b"first\nno newline\nsecond\n"


def test_append_line_writes_exactly_one_line(tmp_path: Path) -> None:
    log = tmp_path / "log.md"
    fsio.append_line(log, "a\nb\r\nc")
    assert log.read_text(encoding="utf-8").splitlines() == ["a b  c"]


def test_appends_from_many_processes_interleave_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "log.md"
    script = ("import sys; from pathlib import Path; from kbsync.store import fsio\n"
              "for i in range(150): fsio.append_line(Path(sys.argv[1]), f'{sys.argv[2]}-{i:04d}-' + 'x' * 200)")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(log), f"w{n}"]) for n in range(4)]
    assert [p.wait(60) for p in procs] == [0, 0, 0, 0]
    lines = log.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    body = lines[:-1]
    assert len(body) == 600
    assert sorted(body) == sorted(f"w{n}-{i:04d}-" + "x" * 200 for n in range(4) for i in range(150))


def test_create_new_never_replaces_a_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "copy.md"
    fsio.create_new(target, b"first\n")
    assert target.read_bytes() == b"first\n"
    with pytest.raises(FileExistsError):
        fsio.create_new(target, b"second\n")
    assert target.read_bytes() == b"first\n"
    assert [p.name for p in target.parent.iterdir()] == ["copy.md"]  # no temp file left behind
