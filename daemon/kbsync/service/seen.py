"""What the daemon last saw of each file it checked, so that an event that changed nothing (its own write, git
rewriting a file as it was) costs no second check: a bounded map of path to a digest of the file's
fingerprint, the least recently seen dropped first. Memory does not grow with the workspace (a first
catch-up checks every file): a file dropped from the map is checked again at its next event, which finds
what it found before and writes nothing.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from kbsync.store.fsio import Fingerprint

MAX_FILES = 20_000  # some 5 MB


def _digest(fp: Fingerprint) -> bytes:
    return hashlib.blake2b(f"{fp.mtime_ns}:{fp.sha256}".encode(), digest_size=12).digest()


class Seen:
    def __init__(self, max_files: int = MAX_FILES) -> None:
        self._max = max_files
        self._files: OrderedDict[str, bytes] = OrderedDict()

    def same(self, relpath: str, fp: Fingerprint) -> bool:
        """Whether `relpath` was last seen at exactly `fp`."""
        return self._files.get(relpath) == _digest(fp)

    def note(self, relpath: str, fp: Fingerprint) -> None:
        self._files[relpath] = _digest(fp)
        self._files.move_to_end(relpath)
        if len(self._files) > self._max:
            self._files.popitem(last=False)

    def forget(self, relpath: str) -> None:
        self._files.pop(relpath, None)

    def __len__(self) -> int:
        return len(self._files)
