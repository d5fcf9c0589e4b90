"""The knowledge board as a person browses it: its two text parts, its entries with this machine's
counters, filtered, searched (the federated search) and sorted, and the decay candidates. Read only: every
change goes through kbsync.app.board, as from the command line."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kbsync.app import board
from kbsync.errors import UsageError

if TYPE_CHECKING:
    from kbsync.board.feedback import DecayCandidate, Stats
    from kbsync.core.boardentry import Entry
    from kbsync.retrieval.fusion import Fused
    from kbsync.store.workspace import Workspace

SORTS = ("newest", "helpful", "idle", "relevance")  # source date newest first; most helpful; least recently
# applied first; the search's order (with a search)
SEARCH_TOP = 200
BOARD_KEY_PREFIX = f"{board.BOARD_FILE}#"


@dataclass(frozen=True)
class Filters:
    type: str = ""
    topic: str = ""
    confidence: str = ""
    status: str = ""
    q: str = ""
    sort: str = "newest"


@dataclass(frozen=True)
class Row:
    entry: Entry
    stats: Stats


@dataclass
class View:
    guide: str  # 长期说明, as written (Markdown)
    trends: str  # 长期趋势, as written (Markdown)
    rows: list[Row]
    total: int  # entries on the board, before filters
    topics: list[str]
    decay: list[DecayCandidate]
    elsewhere: list[Fused] = field(default_factory=list)  # search hits outside the board
    failures: list[tuple[str, str]] = field(default_factory=list)  # search sources that failed, and why
    search_problem: str = ""  # why the words given cannot be searched (then no entry is shown)


def _rows(entries: list[Entry], stats: dict[str, Stats]) -> list[Row]:
    from kbsync.board.feedback import Stats

    return [Row(e, stats.get(e.key, Stats(e.key))) for e in entries]


def _kept(row: Row, f: Filters) -> bool:
    e = row.entry
    return all(not want or have == want for want, have in
               ((f.type, e.type), (f.topic, e.topic), (f.confidence, e.confidence), (f.status, e.status)))


def _sorted(rows: list[Row], how: str) -> list[Row]:
    """Stable sorts over file order: newest source date, most helpful (then least harmful), least recently
    applied (never applied first)."""
    if how == "helpful":
        return sorted(rows, key=lambda r: (-r.stats.helpful, r.stats.harmful))
    if how == "idle":
        return sorted(rows, key=lambda r: r.stats.last_applied or "")
    return sorted(rows, key=lambda r: r.entry.source_date, reverse=True)


def _searched(ws: Workspace, rows: list[Row], q: str) -> tuple[list[Row], list[Fused], list[tuple[str, str]]]:
    """The rows the federated search finds for `q`, in its order; its hits elsewhere; failed sources."""
    from kbsync.app import retrieval

    outcome = retrieval.search(ws, q, top=SEARCH_TOP)
    by_key = {r.entry.key: r for r in rows}
    found = [by_key[h.key[len(BOARD_KEY_PREFIX):]] for h in outcome.results
             if h.key.startswith(BOARD_KEY_PREFIX) and h.key[len(BOARD_KEY_PREFIX):] in by_key]
    others = [h for h in outcome.results if not h.key.startswith(BOARD_KEY_PREFIX)]
    return found, others, outcome.failures


def view(ws: Workspace, f: Filters, now: dt.datetime, days: float = 90.0) -> View:
    """The board page: filtered rows (searched rows keep the search's order unless a sort is asked for)."""
    from kbsync.board import feedback
    from kbsync.board import file as boardfile
    from kbsync.core.protocol import BOARD_SECTIONS

    parsed = boardfile.load_board(ws)  # once: parsing is most of the page's time
    entries = [b.entry for b in parsed.entries()]
    with feedback.FeedbackStore(ws.state_dir) as store:
        stats = store.all()
    sections = {s.name: s.intro + "".join(b.raw for b in s.entries) for s in parsed.sections if s.name}
    rows = _rows(entries, stats)
    out = View(sections.get(BOARD_SECTIONS[0], ""), sections.get(BOARD_SECTIONS[1], ""), [], len(rows),
               sorted({r.entry.topic for r in rows if r.entry.topic}),
               feedback.decay_candidates(entries, stats, now, days))
    kept = [r for r in rows if _kept(r, f)]
    if f.q.strip():
        try:
            kept, out.elsewhere, out.failures = _searched(ws, kept, f.q)
        except UsageError as exc:
            kept, out.search_problem = [], exc.message
    out.rows = kept if f.q.strip() and f.sort == "relevance" else _sorted(kept, f.sort)
    return out


def field_problems(data: dict[str, Any]) -> dict[str, str]:
    """What keeps `data` from being a valid full entry, by field (one message each, the first per field)."""
    from kbsync.core.board import entry_from_fields

    _entry, problems = entry_from_fields(data)
    out: dict[str, str] = {}
    for name, message in problems:
        out.setdefault(name, message)
    return out
