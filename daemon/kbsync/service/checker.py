"""The daemon's check of each quiet file: read it once, validate it, repair it when it has errors, and
remember what it found, so that a file is checked again only when it changed (kbsync.service.seen).

What it keeps between batches: the files it has seen as they are, the append-only files as last found valid
(whose next appends are checked alone, kbsync.service.appendonly), the files a writer holds locked (checked
again once the lock goes), and the files it left out and why (an invalid file, a secret, a link, an unreadable
entry). A file that is still being written goes back to the queue until it is quiet. It runs on the daemon's
worker thread only.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbsync.core import protocol
from kbsync.core.findings import has_errors
from kbsync.core.validate import validate_text
from kbsync.errors import InputError
from kbsync.git import commit
from kbsync.service import appendonly, watch
from kbsync.service.catchup import CatchUp
from kbsync.service.seen import Seen
from kbsync.store import appendscan, daemonstatus, fsio
from kbsync.store.repairfile import RepairOutcome, repair_file
from kbsync.store.workspace import Workspace, decode, left_out

log = logging.getLogger(__name__)

LOCK_RECHECK_S = 0.5


@dataclass
class Batch:
    """What a batch of checks found: the files that changed since last seen, and whether one of them is a
    session closed just now (committed once the queue is empty)."""

    changed: list[str] = field(default_factory=list)
    session_closed: bool = False


class Checker:
    def __init__(self, ws: Workspace, queue: watch.Debouncer) -> None:
        self.ws = ws  # the daemon sets it anew when the configuration is reloaded
        self.queue = queue
        self._seen = Seen()  # bounded: a file dropped from it is checked again at its next event
        self._checked: dict[str, appendonly.Checked] = {}  # append-only files as last found valid
        self.locked: set[str] = set()
        self.skipped: dict[str, str] = {}
        self.last_repair: dict[str, Any] | None = None
        self._scan = commit.secret_scanner(ws)
        self._locks_checked = 0.0

    def check(self, batch: list[str], stopping: threading.Event, catchup: CatchUp) -> Batch:
        """Check each file of `batch` in turn; once `stopping` is set, the rest go back to the queue."""
        found = Batch()
        self._scan = commit.secret_scanner(self.ws)
        for i, rel in enumerate(batch):
            if stopping.is_set():
                for rest in batch[i:]:
                    self.queue.touch(rest, now=True)
                break
            try:
                if self._process(rel, catchup, found):
                    found.changed.append(rel)
            except fsio.UnreadableError as exc:  # e.g. swapped for a FIFO between the checks
                self._left_unreadable(rel, exc.message)
            except Exception as exc:  # one bad file must not stop the daemon
                log.exception("%s: not processed", rel)
                self.skipped[rel] = f"error: {exc}"
            if rel not in self.queue:
                catchup.checked(rel)
        return found

    def _process(self, rel: str, catchup: CatchUp, found: Batch) -> bool:
        """Validate and repair one quiet file; True if it changed since last seen."""
        path = self.ws.path(rel)
        unreadable = fsio.unreadable_reason(path)
        if unreadable:
            self._left_unreadable(rel, unreadable)
            return False
        why = left_out(path)
        if why:
            self._leave_out(rel, why)
            return False
        fp = fsio.fingerprint(path) if path.is_file() else None
        if fp is None:
            self._forget(rel)
            return True
        if self._seen.same(rel, fp):
            return False
        if time.time() - fp.mtime_ns / 1e9 < self.queue.quiet_s:
            self.queue.touch(rel)
            return False
        data = fsio.read_regular(path)[0] if rel.endswith(".md") else b""
        if self._appended_clean(rel, path, data):
            outcome = RepairOutcome(rel, "valid")
        else:
            if rel.endswith(".md") and not self._secret_free(rel, data):
                self._checked.pop(rel, None)
                self._seen.note(rel, fp)
                return False
            outcome = self._check_whole(rel, data) if rel.endswith(".md") else RepairOutcome(rel, "valid")
        if outcome.status in ("locked", "changed"):
            self._wait_for(rel, outcome)
            return False
        self._record(rel, outcome)
        new_fp = fsio.fingerprint(path)
        if new_fp is not None:
            self._seen.note(rel, new_fp)
        log.debug("%s: checked (%s)", rel, outcome.status)
        news = outcome.status == "repaired" or not catchup.untouched(rel)
        if (news and outcome.ok and protocol.classify(rel) == "session"  # never index.md read again for it
                and commit.is_closed_session(rel, fsio.read_regular(path)[0])):
            log.info("%s: closed session written; committing once the queue is empty", rel)
            found.session_closed = True
        return True

    def _appended_clean(self, rel: str, path: Path, data: bytes) -> bool:
        """True when an append-only file only gained lines since it was last found valid and secret-free, and
        those lines are valid and secret-free too (kbsync.service.appendonly)."""
        if not appendonly.applies(rel):
            return False
        new = appendonly.appended(self._checked.get(rel), data)
        if new is None or fsio.lock_held(path) or self._scan(rel, new.scan):
            return False
        try:
            text = decode(new.head, rel) + decode(new.lines, rel)
        except InputError:
            return False
        if has_errors(validate_text(rel, text, self.ws.config)):
            return False
        log.debug("%s: checked the %d appended bytes", rel, len(new.lines))
        self._checked[rel] = new.checked  # the next append is checked from here
        return True

    def _check_whole(self, rel: str, data: bytes) -> RepairOutcome:
        """Validate a file whole, and repair it if it has errors; an append-only file found valid is remembered
        as these bytes (already secret-scanned), so that its next appends are checked alone."""
        self._checked.pop(rel, None)
        if appendonly.applies(rel):
            try:
                findings = appendscan.text_findings(rel, data)  # never decoded whole: it grows without bound
            except InputError:
                findings = None
            if findings is not None and not has_errors(findings):
                self._checked[rel] = appendonly.Checked.of(data)
                return RepairOutcome(rel, "valid", findings=findings)
        return repair_file(self.ws, rel)

    def _leave_out(self, rel: str, why: str) -> None:
        if self.skipped.get(rel) != why:
            log.warning("%s: left out: %s", rel, why)
        self._forget(rel)
        self.skipped[rel] = why

    def _secret_free(self, rel: str, data: bytes) -> bool:
        found = self._scan(rel, data)
        if found:
            log.warning("%s: skipped, a secret was found: %s", rel, found[0])
            self.skipped[rel] = f"secret: {found[0]}"
            return False
        return True

    def _left_unreadable(self, rel: str, why: str) -> None:
        if self.skipped.get(rel) != why:
            log.warning("%s: left out: %s", rel, why)
        self.skipped[rel] = why

    def _wait_for(self, rel: str, outcome: RepairOutcome) -> None:
        if outcome.status == "locked":
            if rel not in self.locked:
                log.info("%s: locked by a writer; will process it once the lock goes", rel)
            self.locked.add(rel)
            self.skipped[rel] = "locked"
        else:
            self.queue.touch(rel)

    def _record(self, rel: str, outcome: RepairOutcome) -> None:
        self.locked.discard(rel)
        if outcome.status == "repaired":
            log.info("%s: repaired (%s)", rel, "; ".join(outcome.fixes))
            self.last_repair = {"path": rel, "time": daemonstatus.stamp(), "fixes": outcome.fixes}
        if outcome.status == "invalid":
            first = next((f for f in outcome.findings if f.level == "error"), None)
            log.warning("%s: invalid, left as it is: %s", rel, first)
            self.skipped[rel] = f"invalid: {first}"
        else:
            self.skipped.pop(rel, None)

    def _forget(self, rel: str) -> None:
        self._seen.forget(rel)
        self._checked.pop(rel, None)
        self.locked.discard(rel)
        self.skipped.pop(rel, None)

    def recheck_locked(self) -> None:
        """Queue again the locked files whose lock has gone."""
        if not self.locked or time.monotonic() - self._locks_checked < LOCK_RECHECK_S:
            return
        self._locks_checked = time.monotonic()
        for rel in list(self.locked):
            if not fsio.lock_held(self.ws.path(rel)):
                self.locked.discard(rel)
                self.queue.touch(rel, now=True)
