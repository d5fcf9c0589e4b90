"""Which session files carry an id hash (`<h7>`), without listing all of sessions/ on every save.

A save must find the file of its raw session id among every date folder (12,000 sessions are some 700
folders). A long-running process (the local server, `kbsync mcp`) keeps each folder's listing and lists
a folder again only when its modification time changed, or when the listing could have missed a change
within the filesystem's timestamp granularity (the folder changed less than RACY_NS before it was listed;
the same rule git uses for its index). A folder's time changes whenever an entry in it is created,
removed or renamed, so a kept listing is always the folder's current one.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kbsync.core import protocol

RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class _Listing:
    mtime_ns: int
    listed_ns: int
    hashes: frozenset[str]  # the h7 the folder's session files carry, conflict copies aside (names are
    # listed again only for a folder that holds the one asked for: a small set each keeps memory low)

    def fresh(self, mtime_ns: int) -> bool:
        return mtime_ns == self.mtime_ns and self.listed_ns - self.mtime_ns > RACY_NS


@dataclass
class _Cache:
    folders: dict[str, _Listing] = field(default_factory=dict)
    scanned_ns: int = 0  # when the scan that made `folders` began (time.monotonic_ns)
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHES: dict[Path, _Cache] = {}
_CACHES_LOCK = threading.Lock()


def carrying(sessions_dir: Path, short: str) -> list[str]:
    """`<folder>/<name>` of every session file under `sessions_dir` whose name carries `short`, sorted.

    Saves at once share a scan of the folders: a caller that waited for the lock while another scanned
    takes the listings of a scan that began after it came in (they show each folder as it was at some
    moment since), and scans only when none did."""
    asked = time.monotonic_ns()
    with _CACHES_LOCK:
        cache = _CACHES.setdefault(sessions_dir, _Cache())
    with cache.lock:
        if cache.scanned_ns <= asked:
            cache.scanned_ns = time.monotonic_ns()
            cache.folders = _scan(sessions_dir, cache.folders)
        folders = cache.folders
    found = [f"{folder}/{name}" for folder, listing in folders.items() if short in listing.hashes
             for name in _names(sessions_dir / folder) if _hash_of(name) == short]
    return sorted(found)


def _scan(sessions_dir: Path, kept: dict[str, _Listing]) -> dict[str, _Listing]:
    """Each date folder's listing: the one kept while it is fresh, else a new one."""
    seen: dict[str, _Listing] = {}
    for folder, mtime_ns in _date_folders(sessions_dir):
        listing = kept.get(folder)
        seen[folder] = listing if listing is not None and listing.fresh(mtime_ns) else _list(sessions_dir / folder, mtime_ns)
    return seen


def _date_folders(sessions_dir: Path) -> list[tuple[str, int]]:
    out = []
    with os.scandir(sessions_dir) as entries:
        for entry in entries:
            if protocol.DATE_FOLDER_RE.match(entry.name):
                try:
                    if entry.is_dir():
                        out.append((entry.name, entry.stat().st_mtime_ns))
                except OSError:
                    continue
    return out


def _list(folder: Path, mtime_ns: int) -> _Listing:
    listed_ns = time.time_ns()
    return _Listing(mtime_ns, listed_ns, frozenset(h for h in map(_hash_of, _names(folder)) if h))


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


@functools.lru_cache(maxsize=4096)  # a folder being written to is listed again at each save: its names repeat
def _hash_of(name: str) -> str | None:
    """The h7 a session file's name carries; None for another name or a conflict copy."""
    m = protocol.SESSION_NAME_RE.match(name)
    return m.group(3) if m and name[:4].isascii() and not protocol.is_conflict_copy(name) else None
