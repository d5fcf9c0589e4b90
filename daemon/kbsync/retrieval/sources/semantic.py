"""The `semantic` source: the records of the workspace's own kinds nearest in meaning to a query, from the
derived semantic index (asked through kbsync.retrieval.semanticclient, whose worker holds the model). With
`[search] semantic` on it is one of the default sources, and kbsync.retrieval.search blends its hits of each
kind with that kind's keyword hits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kbsync.retrieval.fusion import Hit
from kbsync.retrieval.records import KIND_SOURCES
from kbsync.retrieval.sources.base import Kind, SourceSpec, Table, clip
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace

if TYPE_CHECKING:
    from kbsync.retrieval.semanticstore import Found

SEMANTIC = "semantic"


def configured(t: Table, name: str, here: str, where: str | None) -> SourceSpec:
    return SourceSpec(name, SEMANTIC)


def hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
    """The `limit` records of the workspace's kinds nearest in meaning to the query's text, best first; none
    for a query of filters alone (the meaning of `tag:x` is the keyword sources' business) or while the
    index has never been built."""
    if not query.words or query.has_filters:
        return []
    from kbsync.retrieval.semanticclient import nearest

    found = nearest(ws, " ".join([*query.terms, *query.phrases]), list(KIND_SOURCES), limit)
    return [_near_hit(ws, spec.name, i, n) for i, n in enumerate(found, start=1)]


def _near_hit(ws: Workspace, source: str, rank: int, near: Found) -> Hit:
    """A semantic hit; one found by a passage names that passage (read from its file as it is now)."""
    from kbsync.retrieval.semanticbuild import records_of
    from kbsync.retrieval.semanticunits import passage_at

    rec = next((r for r in records_of(ws, near.relpath) or [] if r.key == near.key), None) if near.ordinal else None
    best = passage_at(rec, near.ordinal) if rec else None
    return Hit(source=source, rank=rank, title=near.title, key=near.key, path=near.relpath, summary=clip(near.summary),
               heading=best.heading if best else "", passage=best.text if best else "", score=near.score, kind=near.kind,
               partial=near.partial)


KIND = Kind(configured, hits, usage=SEMANTIC)
