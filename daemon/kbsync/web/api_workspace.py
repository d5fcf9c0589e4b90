"""`/status`, `/commit`, `/sync`, `/search`, `/context`, `/memory-block`, `/stats`: the same app functions as
`kbsync status`, `commit`, `sync`, `search`, `context`, `assist inject` and `stats`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import Query

from kbsync.app import conversation, repo, retrieval, status
from kbsync.app.guard import Learned, guard, record_flags
from kbsync.errors import LockedError
from kbsync.web import models as m
from kbsync.web.deps import WS
from kbsync.web.routing import Router

if TYPE_CHECKING:
    from kbsync.retrieval.fusion import Fused

router = Router(tags=["workspace"])


@router.get("/status", response_model=m.Status, summary="the daemon's state and what waits for a person")
def get_status(ws: WS) -> m.Status:
    return m.Status.model_validate(status.report(ws).as_dict())


@router.post("/commit", response_model=m.CommitResult, summary="commit valid, unlocked, quiet files now")
def post_commit(ws: WS, body: m.CommitRequest) -> m.CommitResult:
    result = repo.commit(ws, body.message)
    if result.blocked:
        raise LockedError(f"{result.blocked}; try again shortly", path=".git/index.lock")
    return m.CommitResult.model_validate(result.as_dict())


@router.post("/sync", response_model=m.SyncResult, summary="commit, pull, integrate and push; never forced")
def post_sync(ws: WS, body: m.Empty) -> m.SyncResult:
    return m.SyncResult.model_validate(repo.sync(ws).as_dict())


@router.get("/search", response_model=m.SearchResult, summary="federated search, fused by rank")
def get_search(ws: WS, q: Annotated[str, Query(min_length=1, description="words and filters, e.g. 合同 tag:法务")],
               top: Annotated[int, Query(ge=0, le=100)] = 10,
               source: Annotated[list[str] | None, Query(description="only these sources (repeat)")] = None,
               ) -> m.SearchResult:
    outcome = retrieval.search(ws, q, sources=source, top=top)
    return m.SearchResult(results=[_hit(r, outcome.verdicts) for r in outcome.results],
                          failures=[m.SourceFailure(source=n, reason=why) for n, why in outcome.failures])


def _hit(r: Fused, verdicts: Learned | None) -> m.SearchHit:
    """A hit as the API gives it: title and summary with any flagged span withheld, the record's flags."""
    passage = {"passage": {"heading": guard(r.heading, verdicts).text, "text": guard(r.passage, verdicts).text}} \
        if r.passage else {}
    return m.SearchHit.model_validate({**r.as_dict(), "title": guard(r.title, verdicts).text,
                                       "summary": guard(r.summary, verdicts).text,
                                       **passage, "flags": record_flags(r.flags)})


@router.post("/memory-block", response_model=m.MemoryBlock, summary="the memory block an assistant's hook injects")
def post_memory_block(ws: WS, body: m.MemoryBlockRequest) -> m.MemoryBlock:
    return m.MemoryBlock.model_validate(conversation.block_for(ws, body.query, body.budget, body.session).as_dict())


@router.post("/context", response_model=m.ContextPack, summary="the prompt pack within a token budget")
def post_context(ws: WS, body: m.ContextRequest) -> m.ContextPack:
    pack = retrieval.build_context(ws, body.query, [t.strip() for t in body.tags if t.strip()], body.budget)
    parts = [{"name": p.name, "text": p.text, "tokens": p.tokens, "flags": p.flags} for p in retrieval.context_parts(pack)]
    return m.ContextPack.model_validate({"budget": pack.budget, "limit": pack.limit, "tokens": pack.tokens(),
                                         "notes": pack.notes, "text": pack.text(), "parts": parts, "flags": pack.flags})


@router.get("/stats", response_model=m.Stats, summary="session counts by tag, month, status or model")
def get_stats(ws: WS, by: Literal["tag", "month", "status", "model"] = "tag") -> m.Stats:
    result = retrieval.stats(ws, by)
    return m.Stats.model_validate({**result.stats.as_dict(), "pushed": result.pushed})
