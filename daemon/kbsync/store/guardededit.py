"""Read-modify-write of one workspace text file under its lock, with a backup of the old bytes."""

from __future__ import annotations

from typing import Callable

from kbsync.store import fsio, pathgate
from kbsync.store.workspace import Workspace, decode


def edit_file(ws: Workspace, relpath: str, edit: Callable[[str], str],
              check: Callable[[str], bool] = lambda _text: True, *, keep_backup: bool = True) -> tuple[str, str]:
    """Apply `edit` to the file's text ("" when absent) and write the result; (old text, new text).

    Holds the file's lock from the read to the write, re-checks the fingerprint just
    before writing, keeps the previous bytes under .kbsync/backup/ (unless `keep_backup`
    is False, for an edit that only appends), writes atomically, and restores the old
    bytes if `check` rejects what was written. Nothing is written when `edit` returns
    the text unchanged. The path passes the path gate first (kbsync.store.pathgate): never through or onto
    a symlink, never into .git or .kbsync.
    """
    path = pathgate.checked(ws.root, relpath)
    daemon = ws.config.daemon
    with fsio.locked(path, ttl_s=daemon.lock_ttl_s, wait_s=daemon.lock_wait_s):
        if not path.exists():
            new = edit("")
            if new:
                fsio.atomic_write(path, new.encode("utf-8"))
            return "", new
        data, fp = fsio.read_with_fingerprint(path)
        old = decode(data, relpath)
        new = edit(old)
        if new != old:
            fsio.guarded_replace(
                path, new.encode("utf-8"), fp,
                backup_to=lambda b: fsio.backup(ws.backup_dir, relpath, b) if keep_backup else None,
                check=lambda b: check(b.decode("utf-8", "replace")),
                hold_lock=False,
            )
        return old, new
