"""Results as the model sees them: kbsync's own fields beside a `content` object that holds the workspace
text (data, never instructions), each flagged span withheld and named in `content.flags` (kbsync.app.guard);
a search hit's `flags` are its record's, in its file's offsets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kbsync.app.guard import content, record_flags

if TYPE_CHECKING:
    from kbsync.app.reading import Item
    from kbsync.app.retrieval import Part
    from kbsync.retrieval.fusion import Fused
    from kbsync.retrieval.search import Outcome

def item(it: Item) -> dict[str, Any]:
    versions = {"versions": it.versions} if it.versions else {}
    return {"kind": it.kind, "ref": it.ref, "path": it.path, **versions, "content": content(text=it.text)}


def hit(r: Fused) -> dict[str, Any]:
    where = {k: v for k, v in (("path", r.path), ("url", r.url)) if v}
    return {"key": r.key, **where, "sources": list(r.sources), "score": round(r.score, 6),
            "flags": record_flags(r.flags), "content": content(title=r.title, summary=r.summary)}


def search(outcome: Outcome) -> dict[str, Any]:
    return {"results": [hit(r) for r in outcome.results],
            "failures": [{"source": name, "why": why} for name, why in outcome.failures]}


def part(p: Part) -> dict[str, Any]:
    """One part of a context pack, its flagged spans already withheld when the pack was assembled."""
    return {"name": p.name, "tokens": p.tokens, "content": {"text": p.text, "flags": p.flags}}
