"""The knowledge board: add, update, list, show and retire entries; per-machine feedback; decay; review.

Entries are written to LEARNING_BOARD.md under its lock (kbsync.board.file); feedback stays in this
machine's .kbsync/ and never in the Markdown.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from kbsync.core import boardentry, versions
from kbsync.errors import InputError, NotFoundError, StaleError, UsageError

if TYPE_CHECKING:
    from kbsync.board.feedback import DecayCandidate, Stats
    from kbsync.core.board import Board
    from kbsync.core.boardentry import Entry
    from kbsync.results import Review
    from kbsync.store.workspace import Workspace

BOARD_FILE = "LEARNING_BOARD.md"
TYPES = boardentry.TYPES
CONFIDENCES = boardentry.CONFIDENCES
STATUSES = boardentry.STATUSES


@dataclass(frozen=True)
class Written:
    key: str  # the entry's key after the write
    action: str  # added, updated, unchanged
    was: str = ""  # the key it had before, for an update
    version: str = ""  # the entry's version after the write


@dataclass(frozen=True)
class Shown:
    entry: Entry
    key: str
    feedback: Stats

    @property
    def version(self) -> str:
        """What an update based on this read sends back as its `base` (see kbsync.core.versions)."""
        return entry_version(self.entry)


def entry_version(entry: Entry) -> str:
    return versions.version_of_fields(entry.as_dict())


@dataclass(frozen=True)
class Decay:
    candidates: list[DecayCandidate]
    marked: list[str]


def clock(text: str | None) -> dt.datetime:
    """The reference time: `text` as ISO 8601, or the clock when None (UsageError naming --now)."""
    from kbsync.board.feedback import parse_when

    if not text:
        return dt.datetime.now(dt.timezone.utc)
    try:
        return parse_when(text)
    except ValueError as exc:
        raise UsageError(f"--now: {exc}") from exc


def entry_key(text: str) -> str:
    """The canonical key of `<title>@<YYYY-MM-DD>` (the date may be written in another accepted form)."""
    from kbsync.core import limits
    from kbsync.core.board import entry_key as key_of
    from kbsync.core.board import normalize_date, split_key

    limits.check(text, "the entry key", limits.REF)
    try:
        title, date = split_key(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    return key_of(title, normalize_date(date) or date)


def _find(board: Board, key: str) -> Entry:
    found = board.find(key)
    if found is None:
        raise NotFoundError(f"no entry {key}; see `kbsync board list`", path=BOARD_FILE)
    return found.entry


def valid_entry(data: dict[str, Any], where: str) -> Entry:
    """The entry a JSON object describes, or InputError listing every problem, one a line."""
    from kbsync.core.board import entry_from_dict

    entry, problems = entry_from_dict(data)
    if entry is None:
        raise InputError("the entry is not valid:\n" + "\n".join(f"  - {p}" for p in problems), path=where)
    return entry


def missing_fields(data: dict[str, Any]) -> list[str]:
    """The fields a full entry needs that `data` lacks (an update takes only a full entry)."""
    from kbsync.core.board import REQUIRED

    return [k for k in ("title", *REQUIRED) if k not in data]


def add_entry(ws: Workspace, data: dict[str, Any], now: dt.datetime, where: str = "<stdin>") -> Written:
    """Add an entry, or update the one with the same title and source date."""
    from kbsync.board import feedback, file

    entry = valid_entry(data, where)
    action = file.upsert_entry(ws, entry)
    _reindex(ws)
    with feedback.FeedbackStore(ws.state_dir) as store:
        store.seen(entry.key, now)
    return Written(entry.key, action, version=entry_version(entry))


def update_entry(ws: Workspace, key: str, data: dict[str, Any], where: str = "<stdin>", *,
                 base: str | None = None, keep_counters: bool = True, now: dt.datetime | None = None) -> Written:
    """Replace entry `key` with the full new version `data` (a partial one is refused, naming what lacks).

    With `base` (the version the caller read), the entry is replaced only if it is still at that version;
    otherwise StaleError names what changed and carries the entry as it is now. Nothing is written then.
    A new title or date is a new key: this machine's counters (helpful, harmful, applied, last applied) move
    to it, unless `keep_counters` is False: the entry then starts afresh, as one added at `now` (default: the
    clock) would, and the old key's counters are dropped (left behind, the review would report them as drift).
    """
    from kbsync.board import feedback, file
    from kbsync.core import board

    missing = missing_fields(data)
    if missing:
        raise InputError(f"a partial update is refused; the full entry is needed, missing: {', '.join(missing)}",
                         path=where)
    entry = valid_entry(data, where)
    action = ""

    def edit(text: str) -> str:
        nonlocal action
        _check_base(_find(board.parse_board(text), key), entry, base)
        try:
            new, action = board.replace_entry(text, key, entry)
        except ValueError as exc:
            raise InputError(f"{exc}; update that entry instead", path=BOARD_FILE) from exc
        return new

    file.edit_board(ws, edit)
    _reindex(ws)
    if entry.key != key:
        with feedback.FeedbackStore(ws.state_dir) as store:
            if keep_counters:
                store.rename(key, entry.key)
            else:
                store.drop(key)
                store.seen(entry.key, now or clock(None))
    return Written(entry.key, action, was=key, version=entry_version(entry))


def _check_base(current: Entry, sent: Entry, base: str | None) -> None:
    """StaleError unless `current` is at version `base` (no base: no check)."""
    if base is None or entry_version(current) == base.strip().strip('"'):
        return
    changed = versions.changed_fields(current.as_dict(), sent.as_dict())
    what = f"; it now differs from your version in: {', '.join(changed)}" if changed else ""
    raise StaleError(f"entry {current.key} changed since version {base} was read (now {entry_version(current)})"
                     f"{what}; read it again and redo your change on it", path=BOARD_FILE,
                     version=entry_version(current), current=current.as_dict(), changed=tuple(changed))


def list_entries(ws: Workspace, *, type: str | None = None, topic: str | None = None, status: str | None = None,
                 confidence: str | None = None, q: str | None = None) -> list[Entry]:
    """The board's entries filtered by type, topic, status and confidence: in file order, or, with words `q`,
    every entry the search finds for them, most relevant first (the search of `kbsync search`, on the board
    alone: the board page, `kbsync board list --query` and the API's `q` are one search)."""
    from kbsync.board import file

    entries = [b.entry for b in file.load_board(ws).entries()]
    if q and q.strip():
        by_key = {e.key: e for e in entries}
        entries = [by_key[k] for k in search_keys(ws, q, len(entries)) if k in by_key]
    return [e for e in entries if (not type or e.type == type) and (not topic or e.topic == topic)
            and (not status or e.status == status) and (not confidence or e.confidence == confidence)]


BOARD_HIT = f"{BOARD_FILE}#"


def search_keys(ws: Workspace, q: str, limit: int) -> list[str]:
    """The keys of the board entries the search finds for `q`, most relevant first, at most `limit`. The board's
    record in the index is brought up to the file first (nothing to do when it is current), so a list made
    right after a write, with no daemon running, holds it."""
    from kbsync.app.retrieval import search
    from kbsync.retrieval import index
    from kbsync.retrieval.search import configured_sources

    names = [s.name for s in configured_sources(ws) if s.kind == "board"]
    if not names or limit <= 0:
        return []
    index.update(ws, [BOARD_FILE])
    hits = search(ws, q, sources=names, top=limit, per_source=limit).results
    return [h.key[len(BOARD_HIT):] for h in hits if h.key.startswith(BOARD_HIT)]


def show_entry(ws: Workspace, key: str) -> Shown:
    """One entry and this machine's feedback counters for it."""
    from kbsync.board import feedback, file

    entry = _find(file.load_board(ws), key)
    with feedback.FeedbackStore(ws.state_dir) as store:
        stats = store.get(key)
    return Shown(entry, key, stats)


def set_status(ws: Workspace, keys: list[str], status: str) -> list[str]:
    """Set `status` on each entry; the keys whose status changed."""
    from kbsync.board import file
    from kbsync.core import board

    changed: list[str] = []

    def edit(text: str) -> str:
        changed.clear()
        for key in keys:
            _find(board.parse_board(text), key)
            text, did = board.set_status(text, key, status)
            changed.extend([key] if did else [])
        return text

    file.edit_board(ws, edit)
    _reindex(ws)
    return changed


def _reindex(ws: Workspace) -> None:
    """Re-index the board just written, so a search made when the call returns finds it as it is now."""
    from kbsync.retrieval.index import written

    written(ws, [BOARD_FILE])


def retire(ws: Workspace, key: str) -> bool:
    """Set entry `key`'s status to retired; False if it already was."""
    return bool(set_status(ws, [key], "retired"))


def give_feedback(ws: Workspace, key: str, *, helpful: bool) -> Stats:
    """Count one use of entry `key` as helpful or harmful, on this machine; the new counters."""
    from kbsync.board import feedback, file

    _find(file.load_board(ws), key)
    with feedback.FeedbackStore(ws.state_dir) as store:
        store.vote(key, helpful=helpful)
        return store.get(key)


def applied(ws: Workspace, keys: list[str], now: dt.datetime) -> list[Stats]:
    """Record that the entries were applied at `now`, on this machine; their counters."""
    from kbsync.board import feedback, file

    board = file.load_board(ws)
    for key in keys:
        _find(board, key)
    with feedback.FeedbackStore(ws.state_dir) as store:
        for key in keys:
            store.applied(key, now)
        return [store.get(k) for k in keys]


def decay_candidates(ws: Workspace, now: dt.datetime, days: float) -> list[DecayCandidate]:
    """Entries not applied for `days` or more harmful than helpful."""
    from kbsync.board import feedback, file

    entries = [b.entry for b in file.load_board(ws).entries()]
    with feedback.FeedbackStore(ws.state_dir) as store:
        return feedback.decay_candidates(entries, store.all(), now, days)


def decay(ws: Workspace, now: dt.datetime, days: float, *, mark: bool = False) -> Decay:
    """The decay candidates, and with `mark` their status set to decaying in the board."""
    found = decay_candidates(ws, now, days)
    marked = set_status(ws, [c.key for c in found], "decaying") if mark and found else []
    return Decay(found, marked)


def search_drift(ws: Workspace, board_text: str) -> list[str]:
    """Where the derived search index disagrees with the board's entries (when this machine has one)."""
    from kbsync.core.board import parse_board
    from kbsync.retrieval import db

    path = db.db_path(ws.state_dir)
    if db.needs_build(path):  # none yet, or of an older layout: the first search builds it
        return []
    conn = db.connect(path)
    try:
        indexed = {r.key.split("#", 1)[-1]: r for r in db.records(conn, "board")}
    finally:
        conn.close()
    entries = {b.entry.key: b.entry for b in parse_board(board_text).entries()}
    fix = "; run `kbsync index rebuild --search`"
    out = [f"{k} is not in the search index{fix}" for k in entries if k not in indexed]
    out += [f"{k} is in the search index but not on the board{fix}" for k in indexed if k not in entries]
    out += [f"{k}: the search index holds an older version{fix}" for k, e in entries.items()
            if k in indexed and (indexed[k].summary, indexed[k].status, indexed[k].type) != (e.summary, e.status, e.type)]
    return out


def review(ws: Workspace, now: dt.datetime, since: str | None, days: float) -> Review:
    """The weekly review: changes since `since` (default a week before `now`), counts, decay, drift."""
    from kbsync.board import feedback, file
    from kbsync.board import review as reviewer

    since = since or (now - dt.timedelta(days=7)).isoformat(timespec="seconds")
    text = file.read_board(ws)
    report = reviewer.review(ws.root, text, since)
    decay = [{"key": c.key, "reasons": list(c.reasons)} for c in decay_candidates(ws, now, days)]
    with feedback.FeedbackStore(ws.state_dir) as store:
        drift = reviewer.drift(set(store.all()), text) + search_drift(ws, text)
    return cast("Review", {**report, "decay": decay, "drift": drift})


def render_entry(entry: Entry) -> str:
    """An entry as it is written in LEARNING_BOARD.md."""
    from kbsync.core.board import render_entry as render

    return render(entry)


def render_review(report: Review) -> str:
    """The review as Markdown for a person who updates 长期趋势."""
    from kbsync.board.review import render_report

    return render_report(report)
