"""The numbers behind the web board's pictures and its weekly review: sessions per month by tag, board
entries by type and confidence, helpful and harmful votes per topic, decay candidates over time; and
the review (changes since a date, drift between the Markdown and what is derived from it, decay).

Each picture is a Grid: categories along one axis, series within each, a count per pair.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kbsync.errors import UsageError

if TYPE_CHECKING:
    from kbsync.board.feedback import Stats
    from kbsync.core.boardentry import Entry
    from kbsync.store.workspace import Workspace

DECAY_DAYS = 90.0
TIMELINE_MONTHS = 12


@dataclass(frozen=True)
class Grid:
    categories: tuple[str, ...]
    series: tuple[str, ...]
    values: tuple[tuple[int, ...], ...]  # values[series][category]


@dataclass(frozen=True)
class Pictures:
    sessions: Grid  # categories months, series tags
    dirty: int  # sessions left out: their frontmatter cannot be read
    entries: Grid  # categories types, series confidences
    feedback: Grid  # categories topics, series helpful and harmful (this machine's votes)
    decay: Grid  # categories months, one series: decay candidates at each month's end


@dataclass(frozen=True)
class Review:
    since: str
    base_commit: str | None
    commits: list[str]
    added: list[str]
    changed: list[str]
    retired: list[str]
    removed: list[str]
    counts: dict[str, dict[str, int]]  # by type, topic and status
    entries: int
    decay: list[tuple[str, str]]  # (entry key, why)
    drift: list[str]  # where derived data disagrees with the Markdown: always empty when all is well


def _grid(categories: list[str], series: list[str], count: Counter[tuple[str, str]]) -> Grid:
    return Grid(tuple(categories), tuple(series), tuple(tuple(count[(c, s)] for c in categories) for s in series))


def entry_grid(entries: list[Entry]) -> Grid:
    """Entries per type (as the schema lists them, then any other) and confidence."""
    from kbsync.core.boardentry import CONFIDENCES, TYPES

    types = list(TYPES) + sorted({e.type for e in entries} - set(TYPES))
    confidences = list(CONFIDENCES) + sorted({e.confidence for e in entries} - set(CONFIDENCES))
    return _grid(types, confidences, Counter((e.type, e.confidence) for e in entries))


def feedback_grid(entries: list[Entry], stats: dict[str, Stats]) -> Grid:
    """Helpful and harmful votes summed per topic, topics with the most votes first."""
    count: Counter[tuple[str, str]] = Counter()
    for e in entries:
        s = stats.get(e.key)
        count[(e.topic, "helpful")] += s.helpful if s else 0
        count[(e.topic, "harmful")] += s.harmful if s else 0
    topics = sorted({e.topic for e in entries}, key=lambda t: (-count[(t, "helpful")] - count[(t, "harmful")], t))
    return _grid(topics, ["helpful", "harmful"], count)


def months_back(now: dt.datetime, n: int) -> list[str]:
    """The `n` months up to `now`'s, oldest first, as YYYY-MM."""
    y, m = now.year, now.month
    out = []
    for _ in range(n):
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y, m - 1) if m > 1 else (y - 1, 12)
    return out[::-1]


def decay_grid(entries: list[Entry], stats: dict[str, Stats], now: dt.datetime, days: float) -> Grid:
    """How many of today's decay candidates had become one by the end of each of the last twelve months."""
    from kbsync.board.feedback import Stats as Counters
    from kbsync.board.feedback import became_candidate

    months = months_back(now, TIMELINE_MONTHS)
    became = [w for e in entries if (w := became_candidate(e, stats.get(e.key, Counters(e.key)), now, days))]
    stamps = [w.astimezone(dt.timezone.utc).strftime("%Y-%m") for w in became]
    count = Counter({(m, "candidates"): sum(1 for s in stamps if s <= m) for m in months})
    return _grid(months, ["candidates"], count)


def pictures(ws: Workspace, now: dt.datetime, days: float = DECAY_DAYS) -> Pictures:
    """Every picture of the stats page, from the index and the board as they are, and this machine's votes."""
    from kbsync.app.catchup import catch_up_due
    from kbsync.board import feedback, file
    from kbsync.retrieval.stats import month_by_tag, session_rows

    rows = session_rows(ws, refresh=catch_up_due(ws))  # as the sessions page reads it
    tab = month_by_tag(rows)
    entries = [b.entry for b in file.load_board(ws).entries()]
    with feedback.FeedbackStore(ws.state_dir) as store:
        stats = store.all()
    return Pictures(Grid(tab.rows, tab.columns, tab.counts), sum(1 for r in rows if r.broken), entry_grid(entries),
                    feedback_grid(entries, stats), decay_grid(entries, stats, now, days))


def weekly_review(ws: Workspace, now: dt.datetime, since: str = "", days: float = DECAY_DAYS) -> Review:
    """The board's weekly review (`kbsync board review`): changes since `since` (a date or time; default a
    week before `now`), counts, decay candidates and drift."""
    from kbsync.app.board import review

    if since and not _is_time(since):
        raise UsageError(f"since={since!r}: write a date such as 2025-06-04 or a time such as 2025-06-04T09:00:00Z")
    if days <= 0:
        raise UsageError(f"days={days:g}: give a positive number of days")
    r = review(ws, now, since or None, days)
    return Review(r["since"], r["base_commit"], r["commits"], r["added"], r["changed"], r["retired"], r["removed"],
                  r["counts"], r["entries"], [(d["key"], "; ".join(d["reasons"])) for d in r["decay"]], r["drift"])


def _is_time(text: str) -> bool:
    from kbsync.board.feedback import parse_when

    try:
        parse_when(text)
    except ValueError:
        return False
    return True
