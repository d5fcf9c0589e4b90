"""The watermark scan and a person's decisions on what it found: list, accept into the board, reject."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kbsync.core.paging import paged
from kbsync.errors import InputError, NotFoundError, StaleError

if TYPE_CHECKING:
    from kbsync.board.scan import SourceResult
    from kbsync.core.candidates import Item
    from kbsync.store.workspace import Workspace


@dataclass(frozen=True)
class Row:
    id: str
    list_path: str  # the candidate list's workspace path
    title: str
    status: str  # pending, accepted, rejected
    path: str  # the item's path in its source
    flags: list[str]


NOTHING_TO_DO = "nothing to do"
PAGE_SIZE = 25  # items shown at a time: 300 from one scan stay a page of a few screens
FLAG_FILTERS = ("flagged", "clean")


@dataclass(frozen=True)
class Accepted:
    item: str
    key: str
    action: str  # what the board did: added, updated, unchanged; "nothing to do" when accepted before
    version: str = ""  # the entry's version right after (what undoing the accept checks)


@dataclass(frozen=True)
class Overrides:
    """Fields a person gives when accepting, over what the item holds (None or empty: keep the item's)."""
    title: str | None = None
    type: str | None = None
    topic: str | None = None
    summary: str | None = None
    scenarios: tuple[str, ...] = ()
    confidence: str | None = None


@dataclass(frozen=True)
class Card:
    """An item as a person reviews it: what the list holds, its flagged lines, its excerpt with them marked."""
    id: str
    list_path: str
    title: str
    status: str
    source: str
    path: str
    source_date: str
    type: str
    topic: str
    summary: str
    scenarios: tuple[str, ...]
    confidence: str
    flags: tuple[str, ...]
    offending: tuple[tuple[str, str], ...]  # (where, flagged text)
    preview: tuple[tuple[str, bool], ...]  # the excerpt in pieces, True where it is flagged
    core: str = ""  # the core content an accepted item gives its entry, as the list holds it


@dataclass(frozen=True)
class Listing:
    path: str  # candidates/YYYY-MM-DD-<source>.md
    items: list[Card]


def _card(rel: str, it: Item) -> Card:
    from kbsync.core import candidates as c

    flagged = c.offending(it)
    return Card(it.id, rel, it.title, c.value(it, "status"), c.value(it, "source"), c.value(it, "path"),
                c.value(it, "source_date"), c.value(it, "type"), c.value(it, "topic"), c.value(it, "summary"),
                tuple(c.values(it, "scenarios")), c.value(it, "confidence"), tuple(c.flags(it)), tuple(flagged),
                tuple(c.highlight(c.preview(it), [text for _where, text in flagged])), it.core)


@dataclass(frozen=True)
class CardPage:
    """One page of the items of every list (newest list first), filtered; with what an accepted item became."""
    cards: list[Card]
    matched: int  # items the filters kept, on every page
    total: int  # items of every list
    page: int
    pages: int
    sources: list[str]  # every configured source named by an item (`notes` of `notes:a.md`), for the filter
    entries: dict[str, str]  # an accepted card's id -> the key of the board entry it became (when found)


def browse(ws: Workspace, *, status: str = "pending", source: str = "", flag: str = "", page: int = 1,
           size: int = PAGE_SIZE) -> CardPage:
    """The items filtered by status (pending, accepted, rejected; "" for all), source and flag (flagged or
    clean), then one page of them: filters first, so the count and the pages are of what matches."""
    cards = [c for listing in review(ws) for c in listing.items]
    kept = [c for c in cards if (not status or c.status == status) and (not source or source_name(c) == source)
            and (flag != "flagged" or c.flags) and (flag != "clean" or not c.flags)]
    shown, page, pages = paged(kept, page, size)
    return CardPage(shown, len(kept), len(cards), page, pages, sorted({source_name(c) for c in cards if c.source}),
                    _entries(ws, [c for c in shown if c.status == "accepted"]))


def source_name(card: Card) -> str:
    """The configured source an item came from: `notes` of `notes:a.md`."""
    return card.source.partition(":")[0]


def _entries(ws: Workspace, accepted: list[Card]) -> dict[str, str]:
    """The board entry each accepted card became: the entry with its source date and core content (what
    accepting never changes; the title can be), its key when there is one."""
    from kbsync.board import file

    if not accepted:
        return {}
    by_content = {(e.source_date, e.core_content.strip()): e.key for e in (b.entry for b in file.load_board(ws).entries())}
    found = {c.id: by_content.get((c.source_date, c.core.strip())) for c in accepted}
    return {k: v for k, v in found.items() if v}


def review(ws: Workspace) -> list[Listing]:
    """Every candidate list, newest first (by the date its name starts with), each item ready to review."""
    return [Listing(rel, [_card(rel, it) for it in items]) for rel, items in reversed(_lists(ws))]


def card(ws: Workspace, item_id: str) -> Card:
    """One item, ready to review (NotFoundError naming the id)."""
    rel, item = _find(ws, item_id)
    return _card(rel, item)


def scan(ws: Workspace, now: dt.datetime, sources: list[str] | None = None) -> list[SourceResult]:
    """Scan the configured knowledge sources (or the named ones) past their watermarks."""
    from kbsync.board.scan import run_scan

    return run_scan(ws, now, sources or None)


def _lists(ws: Workspace) -> list[tuple[str, list[Item]]]:
    from kbsync.core import protocol

    folder = ws.root / protocol.CANDIDATES_DIR
    out: list[tuple[str, list[Item]]] = []
    for p in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rel = f"{protocol.CANDIDATES_DIR}/{p.name}"
        out.append((rel, list(_items(ws.read_text(rel)))))
    return out


@functools.lru_cache(maxsize=16)  # a list's text parsed once while it is unchanged (the pages read every list a view)
def _items(text: str) -> tuple[Item, ...]:
    from kbsync.core import candidates

    return tuple(candidates.parse_items(text))


def _find(ws: Workspace, item_id: str) -> tuple[str, Item]:
    for rel, items in _lists(ws):
        for it in items:
            if it.id == item_id:
                return rel, it
    raise NotFoundError(f"no candidate {item_id}; see `kbsync candidates list`", path="candidates/")


def _decided(rel: str, item: Item, wanted: str) -> bool:
    """True when the item already has the decision `wanted` (nothing to do); InputError when it has the other."""
    from kbsync.core import candidates

    status = candidates.value(item, "status")
    if status in ("pending", wanted):
        return status == wanted
    raise InputError(f"item {item.id} is {status} already; change its status in the list by hand to decide again",
                     path=rel, line=item.start + 1)


def _decide(ws: Workspace, rel: str, item_id: str, status: str) -> None:
    from kbsync.core import candidates
    from kbsync.store.guardededit import edit_file

    edit_file(ws, rel, lambda text: candidates.set_status(text, item_id, status))


def list_items(ws: Workspace, status: str | None = None) -> list[Row]:
    """Every item of every candidate list, optionally only those with `status`."""
    from kbsync.core import candidates

    rows = [Row(it.id, rel, it.title, candidates.value(it, "status"), candidates.value(it, "path"),
                candidates.flags(it)) for rel, items in _lists(ws) for it in items]
    return [r for r in rows if not status or r.status == status]


def accept(ws: Workspace, item_id: str, overrides: Overrides, *, allow_flagged: bool = False) -> Accepted:
    """Turn a pending item into a board entry (refused without scenarios, or when flagged unless allowed)."""
    from kbsync.board import file
    from kbsync.core import candidates

    rel, item = _find(ws, item_id)
    if _decided(rel, item, "accepted"):
        return Accepted(item.id, item.title, NOTHING_TO_DO)
    flagged = candidates.flags(item)
    if flagged and not allow_flagged:
        raise InputError(f"item {item.id} is flagged ({', '.join(flagged)}); read its flagged lines, then "
                         "accept with --allow-flagged", path=rel, line=item.start + 1)
    fields: dict[str, object] = {"title": overrides.title, "type": overrides.type, "topic": overrides.topic,
                                 "summary": overrides.summary, "scenarios": list(overrides.scenarios),
                                 "confidence": overrides.confidence}
    entry, problems = candidates.to_entry(item, fields)
    if entry is None:
        raise InputError(f"item {item.id} cannot become an entry yet; complete it in the list or pass options:\n"
                         + "\n".join(f"  - {p}" for p in problems), path=rel, line=item.start + 1)
    action = file.upsert_entry(ws, entry)
    _decide(ws, rel, item.id, "accepted")
    from kbsync.app.board import entry_version

    return Accepted(item.id, entry.key, action, entry_version(entry))


def reject(ws: Workspace, item_id: str) -> tuple[str, bool]:
    """Mark a pending item rejected so that it is not proposed again; the list it is in, and whether anything
    changed (False: it was rejected already)."""
    rel, item = _find(ws, item_id)
    if _decided(rel, item, "rejected"):
        return rel, False
    _decide(ws, rel, item.id, "rejected")
    return rel, True


def reopen(ws: Workspace, item_id: str) -> bool:
    """Undo a rejection: the item is pending again (False when it was pending already)."""
    rel, item = _find(ws, item_id)
    if _status(item) == "pending":
        return False
    if _status(item) != "rejected":
        raise InputError(f"item {item.id} is {_status(item)}; only a rejection is undone this way", path=rel,
                         line=item.start + 1)
    _decide(ws, rel, item.id, "pending")
    return True


def undo_accept(ws: Workspace, item_id: str, key: str, version: str) -> None:
    """Undo an accept that added entry `key`: the entry leaves the board, if it is still the version the accept
    wrote (StaleError otherwise: it was edited since, and stays), and the item is pending again."""
    from kbsync.app.board import BOARD_FILE, entry_version
    from kbsync.board import file
    from kbsync.core import board

    rel, item = _find(ws, item_id)
    if _status(item) != "accepted":
        raise InputError(f"item {item.id} is {_status(item)}, not accepted; nothing to undo", path=rel,
                         line=item.start + 1)

    def edit(text: str) -> str:
        found = board.parse_board(text).find(key)
        if found is None or entry_version(found.entry) != version:
            raise StaleError(f"entry {key} was changed or removed since it was accepted; it stays as it is",
                             path=BOARD_FILE)
        return board.remove_entry(text, key)

    file.edit_board(ws, edit)
    _decide(ws, rel, item.id, "pending")


def _status(item: Item) -> str:
    from kbsync.core import candidates

    return candidates.value(item, "status")
