"""Retrieval: federated search, the context pack within a token budget, the search index, statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from kbsync.errors import UsageError

if TYPE_CHECKING:
    from kbsync.retrieval.context import Pack
    from kbsync.retrieval.fusion import Fused as Fused  # the doors name it through the app layer
    from kbsync.retrieval.index import BuildResult
    from kbsync.retrieval.search import Outcome as Outcome  # the doors name it through the app layer
    from kbsync.retrieval.semanticstore import Progress as SemanticProgress
    from kbsync.retrieval.stats import Stats
    from kbsync.store.workspace import Workspace


@dataclass(frozen=True)
class StatsResult:
    stats: Stats
    pushed: int | None  # sessions upserted into PostgreSQL when [stats] dsn is set


def search(ws: Workspace, query: str, *, sources: Sequence[str] | None = None, top: int = 10,
           per_source: int | None = None, catch_up: bool = True) -> Outcome:
    """Search every configured source (or the named ones) and fuse their rankings with RRF. With `catch_up`, a
    command's search first has the index catch up with the files (kbsync.app.catchup) when no daemon runs (a
    running daemon's watcher keeps the index, and a look at each of 100,000 files would cost the search more
    than it takes)."""
    from kbsync.app.catchup import catch_up_due
    from kbsync.app.status import daemon_pid
    from kbsync.retrieval import index
    from kbsync.retrieval.search import federated

    if catch_up and catch_up_due(ws) and daemon_pid(ws) is None:
        index.refresh(ws)
    return federated(ws, query, names=sources, top=max(0, top), per_source=per_source)


def split_tags(text: str) -> list[str]:
    """Tags from a comma-separated list (ASCII or full-width commas)."""
    return [t.strip() for t in text.replace("，", ",").split(",") if t.strip()]


def build_context(ws: Workspace, query: str, tags: list[str], budget: int | None = None) -> Pack:
    """The prompt pack for `query`: facts, recent summaries, full texts, references and board entries,
    within `budget` tokens (default: the config's); `tags` are stripped of spaces, empty ones dropped."""
    from kbsync.app.catchup import catch_up_due
    from kbsync.retrieval.context import assemble
    from kbsync.retrieval.contextfiles import gather

    tags = [t.strip() for t in tags if t.strip()]
    budget = budget if budget is not None else ws.config.context.budget
    if budget <= 0:
        raise UsageError(f"--budget {budget}: give a positive number of tokens")
    return assemble(gather(ws, query, tags, refresh=catch_up_due(ws)), ws.config.context, budget)


def estimate_tokens(text: str) -> int:
    """The token estimate the context pack is budgeted with (docs/retrieval.md)."""
    from kbsync.retrieval.context import estimate_tokens as estimate

    return estimate(text)


def rebuild_search(ws: Workspace) -> BuildResult:
    """Rebuild the search database from the workspace's files."""
    from kbsync.retrieval.index import rebuild

    return rebuild(ws)


def rebuild_semantic(ws: Workspace) -> tuple[int, SemanticProgress | None]:
    """Build the semantic index in the worker process (progress on standard error unless quiet): its exit
    status, and how far the index is then."""
    from kbsync import progress
    from kbsync.retrieval.semanticclient import build_now
    from kbsync.retrieval.semanticclient import progress as semantic_progress

    if not ws.config.search.semantic:
        raise UsageError("the semantic index is turned off ([search] semantic = false); turn it on first")
    return build_now(ws, shown=progress.shown()), semantic_progress(ws)


def semantic_progress(ws: Workspace) -> SemanticProgress | None:
    """How far the semantic index is (None when there is none yet, or it is turned off)."""
    from kbsync.retrieval.semanticclient import progress

    return progress(ws) if ws.config.search.semantic else None


def stats(ws: Workspace, by: str) -> StatsResult:
    """Session statistics grouped `by` tag, month, status or model; pushed to PostgreSQL when configured."""
    from kbsync.retrieval.stats import group, session_rows

    rows = session_rows(ws)
    pushed = None
    if ws.config.stats.dsn:
        from kbsync.retrieval.statspg import push

        pushed = push(ws.config.stats.dsn, rows)
    return StatsResult(group(rows, by), pushed)


def render_stats(stats: Stats) -> str:
    """The statistics as a plain-text table."""
    from kbsync.retrieval.stats import render

    return render(stats)
