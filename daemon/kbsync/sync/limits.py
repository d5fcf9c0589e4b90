"""How large a file a remote may send: `[sync] max_file_mb`, and `max_artifact_mb` under artifacts/.

A remote can push a file of any size in a few bytes (200 MB of zeros compress to
about 200 KB), and integrating a file means holding its bytes. So the size of
every file a sync would take is read before any of its bytes: from git's object
header (`git cat-file --batch-check`) in git mode, from the tree listing in API
mode, and while a blob is read from GitHub (the read stops at the limit, so a
listing that lies about a size changes nothing). A file over its limit refuses
the remote commit whole, in one line naming the file, its size and the key to
raise, as the path gate refuses an entry (kbsync.store.pathgate): nothing of the
commit is written, and the next sync says the same until the file is gone from
the remote branch or the limit is raised.
"""

from __future__ import annotations

from typing import Iterable

from kbsync.config import SyncConfig
from kbsync.errors import RemoteError

MB = 1024 * 1024
ARTIFACTS = "artifacts/"


class TooLargeError(RemoteError):
    """A remote file is over its size limit; the remote commit is refused whole."""


def limit_for(cfg: SyncConfig, relpath: str) -> int:
    """The most bytes the remote's file at `relpath` may hold."""
    return int((cfg.max_artifact_mb if relpath.startswith(ARTIFACTS) else cfg.max_file_mb) * MB)


def key_for(relpath: str) -> str:
    return f"[sync] {'max_artifact_mb' if relpath.startswith(ARTIFACTS) else 'max_file_mb'}"


def refusal(cfg: SyncConfig, commit: str, relpath: str, size: int | None) -> TooLargeError:
    """The one line that refuses `commit` for its file `relpath` (`size` bytes; None: more than the limit)."""
    held = f"{size:,} bytes, over" if size is not None else "more than"
    return TooLargeError(f"refused the remote commit {commit[:12]}: its file {relpath!r} holds {held} the limit of "
                         f"{limit_for(cfg, relpath):,} bytes ({key_for(relpath)}); nothing of it was written. "
                         "Remove the file from the remote branch, or raise the limit, then sync again")


def check_sizes(cfg: SyncConfig, commit: str, sized: Iterable[tuple[str, int]]) -> None:
    """TooLargeError for the first (relpath, size) over its limit, in path order."""
    for relpath, size in sorted(sized):
        if size > limit_for(cfg, relpath):
            raise refusal(cfg, commit, relpath, size)
