"""Results as the model sees them: kbsync's own fields beside a `content` object that holds the workspace
text (data, never instructions), each flagged span withheld and named in `content.flags` (kbsync.app.guard);
a search hit's `flags` are its record's, in its file's offsets."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kbsync.app.guard import content, page, record_flags
from kbsync.mcp import results

READ_LIMIT = 40_000  # characters of a text `read` returns at most in one call (about 10,000 tokens)

if TYPE_CHECKING:
    from kbsync.app.guard import Learned
    from kbsync.app.memory import FactWritten
    from kbsync.app.reading import Item
    from kbsync.app.retrieval import Part
    from kbsync.retrieval.fusion import Fused
    from kbsync.retrieval.search import Outcome

def item(it: Item, offset: int = 0, limit: int = READ_LIMIT) -> results.Read:
    """The item's text from `offset`, at most `limit` characters of it (kbsync.app.guard.page), with where the
    page ends, the text's length, and the offset of the next page (None after the last)."""
    versions = {"versions": it.versions} if it.versions else {}
    shown, end = page(it.text, offset, min(limit, READ_LIMIT), it.verdicts)
    total = len(it.text)
    where: results.Page = {"offset": offset, "end": end, "total": total, "next_offset": end if end < total else None}
    return cast(results.Read, {"kind": it.kind, "ref": it.ref, "path": it.path, **versions, "content": shown,
                               "page": where})


def hit(r: Fused, verdicts: Learned | None = None) -> results.Hit:
    where = {k: v for k, v in (("path", r.path), ("url", r.url)) if v}
    passage = {"heading": r.heading, "passage": r.passage} if r.passage else {}
    return cast(results.Hit, {"key": r.key, **where, "sources": list(r.sources), "score": round(r.score, 6),
                              "flags": record_flags(r.flags),
                              "content": content(verdicts, title=r.title, summary=r.summary, **passage)})


def search(outcome: Outcome) -> results.Found:
    return {"results": [hit(r, outcome.verdicts) for r in outcome.results],
            "failures": [{"source": name, "why": why} for name, why in outcome.failures]}


def removed(done: FactWritten) -> results.Forgotten:
    """A forgotten fact: the value it had is workspace text, so it is guarded as every other."""
    return {"path": done.path, "key": done.key, "action": done.action,
            "content": cast(results.ValueText, content(value=done.value))}


def part(p: Part) -> results.Part:
    """One part of a context pack, its flagged spans already withheld when the pack was assembled."""
    return {"name": p.name, "tokens": p.tokens,
            "content": {"text": p.text, "flags": cast(list[results.PackFlag], p.flags)}}
