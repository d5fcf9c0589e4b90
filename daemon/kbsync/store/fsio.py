"""File I/O with the protocol's guarantees: locks, fingerprints, atomic writes, backups, appends.

Nothing here knows Markdown; callers pass bytes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Mapping

from kbsync.errors import ConflictError, InputError, KbsyncError, LockedError

LOCK_SUFFIX = ".lock"
TEMP_SUFFIX = ".tmp"
EMPTY_LOCK_GRACE_S = 2.0


# ---- fingerprints ---------------------------------------------------------

@dataclass(frozen=True)
class Fingerprint:
    mtime_ns: int
    sha256: str

    @classmethod
    def of_bytes(cls, data: bytes, mtime_ns: int) -> "Fingerprint":
        return cls(mtime_ns, hashlib.sha256(data).hexdigest())


class UnreadableError(InputError):
    """A path kbsync will not read as a file: not a regular file, or the system refuses to open it."""


_KINDS = ((stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder"))


def not_regular(mode: int) -> str | None:
    """What a file of this st_mode is when it is not a regular file ("a FIFO (named pipe)", ...), or None."""
    return None if stat.S_ISREG(mode) else next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path | str, lstat: os.stat_result | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and its fstat: lstat first (`lstat`, when the caller has just taken it), then
    opened with O_NOFOLLOW|O_NONBLOCK (a FIFO or device swapped in meanwhile can neither block nor be followed)
    and checked again on the open file. FileNotFoundError if it is gone; UnreadableError says why anything
    else cannot be read."""
    fd, st = _open_regular(path, lstat)
    try:
        parts = [os.read(fd, st.st_size + 1)]  # all of it, as a rule: the next read only finds the end
        while parts[-1]:
            parts.append(os.read(fd, max(st.st_size, 64 * 1024)))
    except OSError as exc:
        raise UnreadableError(f"unreadable: {_os_reason(exc)}", path=str(path)) from None
    finally:
        os.close(fd)
    return (parts[0] if len(parts) == 2 else b"".join(parts)), st


@contextlib.contextmanager
def open_regular(path: Path) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """A regular file open for reading, and its fstat, checked as `read_regular` checks it."""
    fd, st = _open_regular(path, None)
    with open(fd, "rb") as fh:
        yield fh, st


def _open_regular(path: Path | str, lstat: os.stat_result | None) -> tuple[int, os.stat_result]:
    what = not_regular((lstat or os.lstat(path)).st_mode)
    if what is None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise UnreadableError(f"unreadable: {_os_reason(exc)}", path=str(path)) from None
        st = os.fstat(fd)
        what = not_regular(st.st_mode)
        if what is None:
            return fd, st
        os.close(fd)
    raise UnreadableError(f"unreadable: {what}, not a regular file", path=str(path))


def read_chunk(fh: BinaryIO, size: int, path: Path, *, line: bool = False) -> bytes:
    """Up to `size` bytes more (-1: all) of a file `open_regular` opened, or with `line` up to the end of the
    line; UnreadableError if the system fails the read."""
    try:
        return fh.readline(size) if line else fh.read(size)
    except OSError as exc:
        raise UnreadableError(f"unreadable: {_os_reason(exc)}", path=str(path)) from None


def unreadable_reason(path: Path) -> str | None:
    """Why the file at `path` can never be read as content ("unreadable: a FIFO (named pipe), not a regular
    file", a dangling symlink, a socket, a device, permission denied), or None: a readable regular file,
    a folder, a symlink that resolves (kbsync.store.workspace decides about those), or nothing at all."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return None if os.path.exists(path) else "unreadable: a dangling symlink (its target does not exist)"
    what = not_regular(mode)
    if what is not None:
        return None if what == "a folder" else f"unreadable: {what}, not a regular file"
    return None if os.access(path, os.R_OK) else "unreadable: permission denied"


def _os_reason(exc: OSError) -> str:
    return "a symlink" if exc.errno == errno.ELOOP else (exc.strerror or str(exc)).lower()


def read_with_fingerprint(path: Path) -> tuple[bytes, Fingerprint]:
    """The file's bytes and the fingerprint they were read at (read_regular: never a FIFO, never a symlink)."""
    data, st = read_regular(path)
    return data, Fingerprint.of_bytes(data, st.st_mtime_ns)


def fingerprint(path: Path) -> Fingerprint | None:
    try:
        return read_with_fingerprint(path)[1]
    except FileNotFoundError:
        return None


# ---- locks ------------------------------------------------------------------

def lock_path(path: Path) -> Path:
    return path.with_name(path.name + LOCK_SUFFIX)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_is_stale(lock: Path, now: float | None = None) -> bool:
    """A lock whose `expire` passed, or whose pid is gone on this host, or that is unreadable."""
    try:
        info = json.loads(lock.read_text(encoding="utf-8"))
        expire = float(info["expire"])
        pid = int(info["pid"])
        host = str(info["host"])
    except FileNotFoundError:
        return False
    except (OSError, ValueError, KeyError, TypeError):
        # Empty: its taker died between creating and writing it (a live one writes at once).
        # Foreign content: stale only once it is older than a minute.
        try:
            st = lock.stat()
        except FileNotFoundError:
            return False
        return (now or time.time()) - st.st_mtime > (EMPTY_LOCK_GRACE_S if st.st_size == 0 else 60)
    if (now or time.time()) > expire:
        return True
    return host == os.uname().nodename and not pid_alive(pid)


def lock_held(path: Path) -> bool:
    """True while a fresh (not stale) lock is held on `path` by anyone."""
    lock = lock_path(path)
    return lock.exists() and not lock_is_stale(lock)


def clear_stale_lock(path: Path) -> bool:
    """Remove the lock on `path` if it is stale; True if one was removed."""
    lock = lock_path(path)
    if lock.exists() and lock_is_stale(lock):
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
        return True
    return False


def try_lock(path: Path, ttl_s: float) -> bool:
    """Take the lock once; False if a fresh lock is held by someone else."""
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "expire": int(time.time() + ttl_s) + 1})
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not clear_stale_lock(path):
                return False
            continue
        try:
            os.write(fd, body.encode())  # no fsync: after a crash every lock is stale anyway
        finally:
            os.close(fd)
        return True
    return False


def unlock(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        lock_path(path).unlink()


@contextlib.contextmanager
def locked(path: Path, *, ttl_s: float = 120.0, wait_s: float = 5.0) -> Iterator[None]:
    """Hold `<file>.lock` for the block; wait up to `wait_s`, then raise LockedError."""
    deadline = time.monotonic() + wait_s
    while not try_lock(path, ttl_s):
        if time.monotonic() >= deadline:
            raise LockedError(f"locked by another writer ({lock_path(path).name}); try again later", path=str(path))
        time.sleep(0.05)
    try:
        yield
    finally:
        unlock(path)


# ---- atomic writes ------------------------------------------------------------

def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_path_for(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.urandom(6).hex()}{TEMP_SUFFIX}")


def atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, os.replace, fsync of the folder."""
    atomic_write_all({path: data})


def create_new(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet, whole or not at all: a temp file written and fsynced, then
    hard-linked to `path` (FileExistsError, and nothing changed, when something is there), then the folder
    fsynced. Unlike atomic_write, it never replaces a file, not even one that appeared a moment ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(path)
    _write_synced(tmp, data, 0o644)
    try:
        os.link(tmp, path)
    finally:
        tmp.unlink()
    fsync_dir(path.parent)


FSYNC_THREADS = 8  # concurrent fsyncs: the filesystem commits them together, so many files cost little more than one


def atomic_write_all(files: Mapping[Path, bytes], *, temp: Callable[[Path], Path] = temp_path_for,
                     mode: int | None = None) -> None:
    """atomic_write for many files at once, each file as safe as alone: every temp file is written and
    fsynced (concurrently), then each replaces its target, then each folder is fsynced once.

    A file keeps its current permissions unless `mode` is given (new files: 0o644). On an error no temp
    file is left behind; the files already replaced hold their complete new bytes.
    """
    temps = {path: temp(path) for path in files}
    try:
        for path in files:
            path.parent.mkdir(parents=True, exist_ok=True)
        modes = {path: _mode_of(path) if mode is None else mode for path in files}
        _concurrently(lambda path: _write_synced(temps[path], files[path], modes[path]), list(files))
        for path in files:
            os.replace(temps[path], path)
            del temps[path]
    except BaseException:
        for tmp in temps.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise
    _concurrently(fsync_dir, list({path.parent for path in files}))


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o644


def _write_synced(tmp: Path, data: bytes, mode: int) -> None:
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _concurrently(action: Callable[[Path], None], paths: list[Path]) -> None:
    """`action` on each path; in threads when there are several (each waits on the disk, not the CPU)."""
    if len(paths) < 2:
        for path in paths:
            action(path)
        return
    from concurrent.futures import ThreadPoolExecutor  # here: most writes are of one file, and it costs start-up time

    with ThreadPoolExecutor(min(FSYNC_THREADS, len(paths))) as pool:
        list(pool.map(action, paths))


def append_line(path: Path, line: str) -> None:
    """One line, appended with O_APPEND in a single write; a missing final newline is supplied first.

    The file itself must not be a symlink (O_NOFOLLOW), so an append never lands outside the workspace.
    A line that cannot be written whole (a full disk, a file-size limit) is undone: KbsyncError, and the file
    is cut back to its size before (see _append_whole).
    """
    text = line.replace("\r", " ").replace("\n", " ")
    if "\0" in text:
        raise InputError("a NUL character cannot be written into a text file; nothing was written", path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        # kbsync's appenders take turns, so none reads the end of a line another is still writing
        # (a write that crosses a page boundary grows the size before all of its bytes are there).
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        _append_whole(fd, size, prefix + text.encode("utf-8") + b"\n", path)
    finally:
        os.close(fd)


def _append_whole(fd: int, size: int, data: bytes, path: Path) -> None:
    """`data` at the end of the file (`size` bytes before), then fsync. A write that stops short (a full disk
    writes part of a line; a file-size limit writes up to it, then fails) or an fsync that fails leaves half
    a line, which would make the file invalid: the file is cut back to `size` and KbsyncError says so."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.ENOSPC, "nothing more could be written")
            view = view[written:]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as undo:
            raise KbsyncError(f"a line could not be written whole ({exc.strerror or exc}), and cutting the part "
                              f"written failed too ({undo.strerror or undo}); run `kbsync repair`",
                              path=str(path)) from None
        raise KbsyncError(f"a line could not be written whole ({exc.strerror or exc}); nothing was added to the "
                          "file; free space (or raise the file-size limit) and try again", path=str(path)) from None


# ---- guarded replace: the repair/update write path ------------------------------

def utc_stamp(now: float | None = None) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now if now is not None else time.time()))


def backup(backup_root: Path, relpath: str, data: bytes, now: float | None = None) -> Path:
    """Keep `data` (a file's previous bytes) under `.kbsync/backup/<UTC>/<relpath>`."""
    base = backup_root / utc_stamp(now) / relpath
    dest, n = base, 1
    while dest.exists():
        dest = base.with_name(f"{base.name}.{n}")
        n += 1
    atomic_write(dest, data)
    return dest


def guarded_replace(
    path: Path,
    new: bytes,
    expected: Fingerprint,
    *,
    backup_to: Callable[[bytes], object],
    check: Callable[[bytes], bool],
    hold_lock: bool = True,
    ttl_s: float = 120.0,
) -> None:
    """Replace `path` with `new` only if it still has fingerprint `expected`.

    Takes the file's lock (LockedError if a fresh one is held), re-checks the
    fingerprint just before writing (ConflictError if it changed), backs up the
    old bytes, writes atomically, re-reads, and restores the old bytes if `check`
    rejects what is on disk. A symlink is never replaced (by a file holding its target's bytes): InputError.
    """
    if path.is_symlink():
        raise InputError("left out: a symlink, which kbsync never replaces or follows", path=str(path))
    if hold_lock and not try_lock(path, ttl_s):
        raise LockedError("skipped: the file is locked by a writer", path=str(path))
    try:
        old, now_fp = read_with_fingerprint(path)
        if now_fp != expected:
            raise ConflictError("skipped: the file changed since it was read", path=str(path))
        backup_to(old)
        atomic_write(path, new)
        written = path.read_bytes()
        if written != new or not check(written):
            atomic_write(path, old)
            raise ConflictError("the rewritten file did not re-parse; previous bytes restored", path=str(path))
    finally:
        if hold_lock:
            unlock(path)


def is_temp_or_lock(name: str) -> bool:
    return name.endswith(TEMP_SUFFIX) or name.endswith(LOCK_SUFFIX)
