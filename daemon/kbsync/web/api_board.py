"""`/board` and `/candidates`: the same app functions as `kbsync board ...` and `kbsync candidates ...`.

An entry is named in a URL by its key, `<title>@<source date>`, percent-encoded (a `/` in a title as
%2F); the key's date may be written in another accepted form (2025/6/11) and is made canonical.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Path, Query, Response

from kbsync.app import board, candidates, shapes
from kbsync.app.guard import learned
from kbsync.results import (
    Accepted,
    BoardEntry,
    Candidate,
    Decay,
    EntryWritten,
    FeedbackCounts,
    Rejected,
    Review,
    ShownEntry,
)
from kbsync.web import boardmodels as b
from kbsync.web.deps import WS, BasedOn, etag
from kbsync.web.models import Empty
from kbsync.web.routing import Router

router = Router(tags=["board"])
Key = Annotated[str, Path(description=b.BOARD_KEY, examples=["部署回滚流程@2025-06-11"])]
When = Annotated[str | None, Query(description="the reference time, ISO 8601 (default: now)")]
Days = Annotated[float, Query(gt=0, le=36500, description="days without being applied")]


@router.get("/board/entries", response_model=list[BoardEntry], summary="entries in board order, filtered")
def list_entries(ws: WS, type: str | None = None, topic: str | None = None, status: str | None = None,
                 confidence: str | None = None,
                 q: Annotated[str | None, Query(description="words every entry must hold")] = None) -> list[BoardEntry]:
    verdicts = learned(ws)
    found = board.list_entries(ws, type=type, topic=topic, status=status, confidence=confidence, q=q)
    return [shapes.entry(e, verdicts) for e in found]


@router.post("/board/entries", response_model=EntryWritten, status_code=201,
             responses={200: {"model": EntryWritten, "description": "an entry with that key existed: updated or unchanged"}},
             summary="add an entry (201), or update the one with the same key (200)")
def add_entry(ws: WS, body: b.EntryFields, response: Response) -> EntryWritten:
    done = board.add_entry(ws, body.model_dump(), board.clock(None), "request body")
    response.status_code = 201 if done.action == "added" else 200
    return shapes.entry_written(done)


@router.get("/board/entries/{key:path}", response_model=ShownEntry, summary="one entry and this machine's counters")
def show_entry(ws: WS, key: Key, response: Response) -> ShownEntry:
    shown = board.show_entry(ws, board.entry_key(key))
    response.headers.update(etag(shown.version))
    return shapes.shown_entry(shown, learned(ws))


@router.put("/board/entries/{key:path}", response_model=EntryWritten,
            summary="replace an entry with a full new version (a partial body is 422, naming each missing field; "
                    "with If-Match, an entry changed since is 409 `stale`)")
def update_entry(ws: WS, key: Key, body: b.EntryFields, base: BasedOn, response: Response,
                 keep_counters: Annotated[bool, Query(description="a new title or date is a new key: move this "
                                                      "machine's counters to it (false: start afresh)")] = True,
                 ) -> EntryWritten:
    done = board.update_entry(ws, board.entry_key(key), body.model_dump(), "request body", base=base,
                              keep_counters=keep_counters)
    response.headers.update(etag(done.version))
    return shapes.entry_written(done)


@router.post("/board/entries/{key:path}/feedback", response_model=FeedbackCounts,
             summary="count one use of an entry as helpful or harmful (this machine only)")
def give_feedback(ws: WS, key: Key, body: b.Vote) -> FeedbackCounts:
    return board.give_feedback(ws, board.entry_key(key), helpful=body.vote == "helpful").as_dict()


@router.post("/board/entries/{key:path}/applied", response_model=FeedbackCounts,
             summary="record that an entry was applied (this machine only)")
def applied(ws: WS, key: Key, body: b.Applied) -> FeedbackCounts:
    (stats,) = board.applied(ws, [board.entry_key(key)], board.clock(body.now))
    return stats.as_dict()


@router.get("/board/decay", response_model=Decay,
            summary="entries not applied for a while, or more harmful than helpful")
def decay(ws: WS, now: When = None, days: Days = 90.0) -> Decay:
    return shapes.decay(board.decay_candidates(ws, board.clock(now), days))


@router.get("/board/review", response_model=Review, summary="the weekly review")
def review(ws: WS, now: When = None, days: Days = 90.0,
           since: Annotated[str | None, Query(description="date or time to compare with (default: a week "
                                                           "before now)")] = None) -> Review:
    return board.review(ws, board.clock(now), since, days)


# ---- candidates ----------------------------------------------------------------------------------------

Item = Annotated[str, Path(description="the item's id (c-...)")]


@router.get("/candidates", response_model=list[Candidate], tags=["candidates"],
            summary="the items of every candidate list")
def list_candidates(ws: WS, status: Literal["pending", "accepted", "rejected"] | None = None) -> list[Candidate]:
    return [shapes.candidate(r) for r in candidates.list_items(ws, status)]


@router.post("/candidates/{item}/accept", response_model=Accepted, tags=["candidates"],
             summary="turn a reviewed item into a board entry")
def accept(ws: WS, item: Item, body: b.Accept) -> Accepted:
    overrides = candidates.Overrides(title=body.title, type=body.type, topic=body.topic, summary=body.summary,
                                     scenarios=tuple(body.scenarios), confidence=body.confidence)
    return shapes.accepted(candidates.accept(ws, item, overrides, allow_flagged=body.allow_flagged))


@router.post("/candidates/{item}/reject", response_model=Rejected, tags=["candidates"],
             summary="record that an item is not wanted; it is not proposed again")
def reject(ws: WS, item: Item, body: Empty) -> Rejected:
    rel, changed = candidates.reject(ws, item)
    return shapes.rejected(item, rel, changed)
