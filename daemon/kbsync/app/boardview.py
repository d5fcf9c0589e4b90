"""The knowledge board as a person browses it: its two text parts, its entries with this machine's
counters, filtered, searched (the federated search) and sorted, and the decay candidates. Read only: every
change goes through kbsync.app.board, as from the command line."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kbsync.app import board
from kbsync.app.flagview import FlagNote, notes
from kbsync.core.paging import paged
from kbsync.errors import UsageError

if TYPE_CHECKING:
    from kbsync.board.feedback import DecayCandidate, Stats
    from kbsync.core.board import Board
    from kbsync.core.boardentry import Entry
    from kbsync.core.detect.injectionclassifier import Learned
    from kbsync.retrieval.fusion import Fused
    from kbsync.store.workspace import Workspace

SORTS = ("newest", "helpful", "idle", "relevance")  # source date newest first; most helpful; least recently
# applied first; the search's order (with a search)
ELSEWHERE_TOP = 10  # the search's best hits outside the board, shown below the entries
BOARD_KEY_PREFIX = f"{board.BOARD_FILE}#"
PAGE_SIZE = 50  # entries, and decay candidates, shown at a time: a board of thousands stays one quick page


@dataclass(frozen=True)
class Filters:
    type: str = ""
    topic: str = ""
    confidence: str = ""
    status: str = ""
    q: str = ""
    sort: str = ""  # one of SORTS, or "" for the default (see sort_for)
    page: int = 1  # of the entries kept
    decay_page: int = 1  # of the decay candidates


@dataclass(frozen=True)
class Row:
    entry: Entry
    stats: Stats
    flags: list[FlagNote] = field(default_factory=list)  # embedded instructions in its fields (shown rows only)


@dataclass
class View:
    guide: str  # 长期说明, as written (Markdown)
    trends: str  # 长期趋势, as written (Markdown)
    rows: list[Row]  # the page asked for
    total: int  # entries on the board, before filters
    topics: list[str]
    decay: list[DecayCandidate]  # the page asked for
    matched: int = 0  # entries the filters and the search kept, on every page
    page: int = 1
    pages: int = 1
    decay_total: int = 0
    decay_page: int = 1
    decay_pages: int = 1
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


def sort_for(given: str, q: str) -> str:
    """The order asked for, else the search's (relevance) with words to search for, newest without."""
    return given if given in SORTS else "relevance" if q.strip() else "newest"


def _sorted(rows: list[Row], how: str) -> list[Row]:
    """Stable sorts over file order: newest source date, most helpful (then least harmful), least recently
    applied (never applied first)."""
    if how == "helpful":
        return sorted(rows, key=lambda r: (-r.stats.helpful, r.stats.harmful))
    if how == "idle":
        return sorted(rows, key=lambda r: r.stats.last_applied or "")
    return sorted(rows, key=lambda r: r.entry.source_date, reverse=True)


def _searched(ws: Workspace, rows: list[Row], q: str, total: int) -> tuple[list[Row], list[Fused],
                                                                           list[tuple[str, str]]]:
    """Every row the search finds for `q` (the board's own search, as `kbsync board list --query` runs it), in
    its order; the federated search's best hits elsewhere; failed sources."""
    from kbsync.app import retrieval
    from kbsync.retrieval.search import configured_sources

    by_key = {r.entry.key: r for r in rows}
    found = [by_key[k] for k in board.search_keys(ws, q, total) if k in by_key]  # filters before paging
    elsewhere = [s.name for s in configured_sources(ws) if s.kind != "board"]  # the board's own are listed above
    if not elsewhere:
        return found, [], []
    outcome = retrieval.search(ws, q, sources=elsewhere, top=ELSEWHERE_TOP)
    others = [h for h in outcome.results if not h.key.startswith(BOARD_KEY_PREFIX)]
    return found, others, outcome.failures


_parsed: dict[str, tuple[tuple[int, ...], Board]] = {}


def _board(ws: Workspace) -> Board:
    """The board parsed, kept while the file is unchanged (parsing is most of a view's time). The file is
    looked at before it is read, so a change made in between is seen by the next view."""
    from kbsync.board import file

    path = ws.path(board.BOARD_FILE)
    try:
        st = path.stat()
        stamp: tuple[int, ...] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except FileNotFoundError:
        stamp = ()
    held = _parsed.get(str(path))
    if held is None or held[0] != stamp or not stamp:
        held = (stamp, file.load_board(ws))
        _parsed.clear()
        _parsed[str(path)] = held
    return held[1]


def view(ws: Workspace, f: Filters, now: dt.datetime, days: float = 90.0) -> View:
    """The board page: filtered rows (searched rows keep the search's order unless a sort is asked for),
    one page of them and one page of the decay candidates."""
    from kbsync.app.guard import learned
    from kbsync.board import feedback
    from kbsync.core.protocol import BOARD_SECTIONS

    parsed = _board(ws)
    entries = [b.entry for b in parsed.entries()]
    with feedback.FeedbackStore(ws.state_dir) as store:
        stats = store.all()
    sections = {s.name: s.intro + "".join(b.raw for b in s.entries) for s in parsed.sections if s.name}
    rows = _rows(entries, stats)
    decay = feedback.decay_candidates(entries, stats, now, days)
    out = View(sections.get(BOARD_SECTIONS[0], ""), sections.get(BOARD_SECTIONS[1], ""), [], len(rows),
               sorted({r.entry.topic for r in rows if r.entry.topic}), [], decay_total=len(decay))
    out.decay, out.decay_page, out.decay_pages = paged(decay, f.decay_page, PAGE_SIZE)
    kept = [r for r in rows if _kept(r, f)]
    if f.q.strip():
        try:
            kept, out.elsewhere, out.failures = _searched(ws, kept, f.q, len(rows))
        except UsageError as exc:
            kept, out.search_problem = [], exc.message
    how = sort_for(f.sort, f.q)
    ordered = kept if f.q.strip() and how == "relevance" else _sorted(kept, how)
    out.matched = len(ordered)
    shown, out.page, out.pages = paged(ordered, f.page, PAGE_SIZE)
    verdicts = learned(ws) if shown else None
    out.rows = [Row(r.entry, r.stats, entry_flags(r.entry, verdicts)) for r in shown]
    return out


def entry_flags(e: Entry, verdicts: Learned | None = None) -> list[FlagNote]:
    """The embedded instructions in an entry's fields (the rules' and, given its verdicts, the classifier's), each
    with its excerpt."""
    return notes({"title": e.title, "summary": e.summary, "core_content": e.core_content, "source": e.source,
                  "scenarios": "\n".join(e.scenarios)}, verdicts)


def field_problems(data: dict[str, Any]) -> dict[str, str]:
    """What keeps `data` from being a valid full entry, by field (one message each, the first per field)."""
    from kbsync.core.board import entry_from_fields

    _entry, problems = entry_from_fields(data)
    out: dict[str, str] = {}
    for name, message in problems:
        out.setdefault(name, message)
    return out
