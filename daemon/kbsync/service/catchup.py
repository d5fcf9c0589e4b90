"""One catch-up scan's files: how far the worker got with them, and which of them git holds as committed.

The daemon queues, at start and after lost events, every file git reports as changed and every file
modified since the last completed scan. A file of the second kind that git holds exactly as committed was
touched by nobody: checking it is right, but it is no news (no "closed session written", no commit).
The first catch-up of a large workspace takes a while, so it shows progress (kbsync.progress).
"""

from __future__ import annotations

from kbsync.progress import Progress


class CatchUp:
    def __init__(self, dirty: set[str], clean: set[str]) -> None:
        self._clean = clean - dirty
        self._left = dirty | clean
        self._progress = Progress("catch-up", len(self._left), "files")

    @property
    def queued(self) -> set[str]:
        return set(self._left)

    def untouched(self, relpath: str) -> bool:
        """Whether `relpath` was queued only by the scan and is as git holds it (nobody wrote it)."""
        return relpath in self._clean

    def touched(self, relpath: str) -> None:
        """A write was seen on `relpath` after the scan queued it."""
        self._clean.discard(relpath)

    def checked(self, relpath: str) -> bool:
        """The worker is done with `relpath`; True once every queued file is."""
        if relpath in self._left:
            self._left.discard(relpath)
            self._clean.discard(relpath)
            self._progress.advance()
        if not self._left:
            self._progress.close()
        return not self._left
