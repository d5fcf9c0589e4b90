"""`/status`, `/commit`, `/sync`, `/search`, `/context`, `/memory-block`, `/stats`: the same app functions as
`kbsync status`, `commit`, `sync`, `search`, `context`, `assist inject` and `stats`."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Query

from kbsync.app import conversation, repo, retrieval, shapes, status
from kbsync.errors import LockedError
from kbsync.results import CommitReport, Found, MemoryBlock, Pack, StatsReport, StatusReport, SyncReport
from kbsync.web import models as m
from kbsync.web.deps import WS
from kbsync.web.routing import Router

router = Router(tags=["workspace"])


@router.get("/status", response_model=StatusReport, summary="the daemon's state and what waits for a person")
def get_status(ws: WS) -> StatusReport:
    return status.report(ws).as_dict()


@router.post("/commit", response_model=CommitReport, summary="commit valid, unlocked, quiet files now")
def post_commit(ws: WS, body: m.CommitRequest) -> CommitReport:
    result = repo.commit(ws, body.message)
    if result.blocked:
        raise LockedError(f"{result.blocked}; try again shortly", path=".git/index.lock")
    return result.as_dict()


@router.post("/sync", response_model=SyncReport, summary="commit, pull, integrate and push; never forced")
def post_sync(ws: WS, body: m.Empty) -> SyncReport:
    return repo.sync(ws).as_dict()


@router.get("/search", response_model=Found, summary="federated search, fused by rank")
def get_search(ws: WS, q: Annotated[str, Query(min_length=1, description="words and filters, e.g. 合同 tag:法务")],
               top: Annotated[int, Query(ge=0, le=100)] = 10,
               source: Annotated[list[str] | None, Query(description="only these sources (repeat)")] = None,
               ) -> Found:
    return shapes.found(retrieval.search(ws, q, sources=source, top=top))


@router.post("/memory-block", response_model=MemoryBlock, summary="the memory block an assistant's hook injects")
def post_memory_block(ws: WS, body: m.MemoryBlockRequest) -> MemoryBlock:
    return conversation.block_for(ws, body.query, body.budget, body.session).as_dict()


@router.post("/context", response_model=Pack, summary="the prompt pack within a token budget")
def post_context(ws: WS, body: m.ContextRequest) -> Pack:
    return shapes.pack(retrieval.build_context(ws, body.query, body.tags, body.budget))


@router.get("/stats", response_model=StatsReport, summary="session counts by tag, month, status or model")
def get_stats(ws: WS, by: Literal["tag", "month", "status", "model"] = "tag") -> StatsReport:
    return shapes.stats(retrieval.stats(ws, by))
