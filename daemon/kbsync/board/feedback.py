"""Per-machine runtime counters of board entries (helpful, harmful, applied), and decay.

The counters live in `.kbsync/feedback.sqlite3`: never in the Markdown, never synced.
Losing the file loses only the counters.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from kbsync.core.board import Entry
from kbsync.errors import KbsyncError

if TYPE_CHECKING:
    from kbsync.results import FeedbackCounts

DB_NAME = "feedback.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    key TEXT PRIMARY KEY,
    helpful INTEGER NOT NULL DEFAULT 0,
    harmful INTEGER NOT NULL DEFAULT 0,
    applied INTEGER NOT NULL DEFAULT 0,
    last_applied TEXT,
    first_seen TEXT
)
"""


@dataclass(frozen=True)
class Stats:
    key: str
    helpful: int = 0
    harmful: int = 0
    applied: int = 0
    last_applied: str | None = None  # ISO 8601 UTC
    first_seen: str | None = None  # when this machine first recorded the entry

    def as_dict(self) -> FeedbackCounts:
        return {"key": self.key, "helpful": self.helpful, "harmful": self.harmful, "applied": self.applied,
                "last_applied": self.last_applied, "first_seen": self.first_seen}


@dataclass(frozen=True)
class DecayCandidate:
    key: str
    reasons: tuple[str, ...]


def iso_utc(now: dt.datetime) -> str:
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_when(text: str) -> dt.datetime:
    """A timezone-aware datetime from ISO 8601 (`Z` allowed); a bare date is midnight UTC."""
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"{text!r} is not an ISO 8601 time such as 2025-06-11T09:00:00+08:00") from exc
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


class FeedbackStore:
    """The counters of one workspace on this machine. Use as a context manager."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / DB_NAME
        try:
            self._db = sqlite3.connect(self.path, timeout=5.0)
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise KbsyncError(f"cannot open the feedback counters ({exc}); delete the file to start them afresh",
                              path=str(self.path)) from exc

    def __enter__(self) -> "FeedbackStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def _bump(self, key: str, sql: str, params: tuple[object, ...]) -> None:
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO feedback (key) VALUES (?)", (key,))
            self._db.execute(sql, (*params, key))

    def seen(self, key: str, now: dt.datetime) -> None:
        self._bump(key, "UPDATE feedback SET first_seen = COALESCE(first_seen, ?) WHERE key = ?", (iso_utc(now),))

    def vote(self, key: str, *, helpful: bool) -> None:
        column = "helpful" if helpful else "harmful"
        self._bump(key, f"UPDATE feedback SET {column} = {column} + 1 WHERE key = ?", ())

    def applied(self, key: str, now: dt.datetime) -> None:
        self._bump(key, "UPDATE feedback SET applied = applied + 1, last_applied = ? WHERE key = ?", (iso_utc(now),))

    def rename(self, old: str, new: str) -> None:
        """The counters of `old` moved to `new` (an entry whose title or date changed): added to any `new` has,
        the later last use and the earlier first sighting kept."""
        if old == new:
            return
        with self._db:
            row = self._db.execute("SELECT helpful, harmful, applied, last_applied, first_seen FROM feedback "
                                   "WHERE key = ?", (old,)).fetchone()
            if row is None:
                return
            self._db.execute("INSERT OR IGNORE INTO feedback (key) VALUES (?)", (new,))
            self._db.execute(
                "UPDATE feedback SET helpful = helpful + ?1, harmful = harmful + ?2, applied = applied + ?3, "
                "last_applied = CASE WHEN last_applied IS NULL OR ?4 > last_applied THEN ?4 ELSE last_applied END, "
                "first_seen = CASE WHEN first_seen IS NULL OR ?5 < first_seen THEN COALESCE(?5, first_seen) "
                "ELSE first_seen END WHERE key = ?6", (*row, new))
            self._db.execute("DELETE FROM feedback WHERE key = ?", (old,))

    def drop(self, key: str) -> None:
        """Forget the counters of `key` (an entry renamed to start afresh)."""
        with self._db:
            self._db.execute("DELETE FROM feedback WHERE key = ?", (key,))

    def all(self) -> dict[str, Stats]:
        rows = self._db.execute(
            "SELECT key, helpful, harmful, applied, last_applied, first_seen FROM feedback ORDER BY key").fetchall()
        return {r[0]: Stats(*r) for r in rows}

    def get(self, key: str) -> Stats:
        return self.all().get(key, Stats(key))


def decay_candidates(entries: Iterable[Entry], stats: dict[str, Stats], now: dt.datetime,
                     days: float) -> list[DecayCandidate]:
    """Entries not applied for `days` (or ever, since first seen or their source date), and
    entries whose harmful count outweighs the helpful one. Retired entries are left out."""
    out: list[DecayCandidate] = []
    for e in entries:
        if e.status == "retired":
            continue
        s = stats.get(e.key, Stats(e.key))
        reasons = [r for r in (_idle_reason(e, s, now, days), _harm_reason(s)) if r]
        if reasons:
            out.append(DecayCandidate(e.key, tuple(reasons)))
    return out


def idle_since(e: Entry, s: Stats) -> str:
    """Since when the entry has gone unused: its last application, else when first seen, else its source date."""
    return s.last_applied or s.first_seen or e.source_date


def became_candidate(e: Entry, s: Stats, now: dt.datetime, days: float) -> dt.datetime | None:
    """When a decay candidate became one: `days` after it went unused, or `now` when only harm makes it
    one (no history says when); None for an entry that is not a candidate at `now`."""
    if not decay_candidates([e], {e.key: s}, now, days):
        return None
    try:
        idle = parse_when(idle_since(e, s)) + dt.timedelta(days=days)
    except ValueError:
        return now
    return idle if idle <= now else now


def _idle_reason(e: Entry, s: Stats, now: dt.datetime, days: float) -> str | None:
    since = idle_since(e, s)
    try:
        idle = (now - parse_when(since)).total_seconds() / 86400
    except ValueError:
        return None
    if idle < days:
        return None
    what = f"last applied {s.last_applied}" if s.last_applied else f"never applied (since {since})"
    return f"not applied for {int(idle)} days ({what})"


def _harm_reason(s: Stats) -> str | None:
    return f"harmful {s.harmful} > helpful {s.helpful}" if s.harmful > s.helpful else None
